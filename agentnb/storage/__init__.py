"""Where sessions and runs are kept beyond the process: the SQLite store, traces and the one
event codec they share."""
