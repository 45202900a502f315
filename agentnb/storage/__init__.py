"""Where sessions and runs are kept beyond the process: the SQLite store, traces and the one
event codec they share.

Public here, for the periphery (``agentnb.service`` keeps its task log beside a store's
sessions, on the store's own database): :class:`SQLStore` (what a SQLite or Postgres store
shares), :class:`SQLDatabase` and :class:`Statements` (one connection, one transaction at a
time, each failure a typed ``StoreError``), :class:`PostgresStore` and :func:`describe` (a
Postgres connection string safe to show, and its credentials to mask).

And the one rule every file agentnb writes follows (``agentnb._json``), public for the
periphery's own files (a saved evaluation, a recording, a CI report): :func:`dumps` (one JSON
line that stays one line and reads back exactly, a lone surrogate kept as its escape) and
:func:`write_atomically` (a temporary file beside it, then a rename).
"""

from .._json import dumps, write_atomically
from .database import SQLDatabase, Statements
from .postgres import PostgresStore, describe
from .sql import SQLStore
from .sqlite import SQLiteStore
from .trace import Trace

__all__ = [
    "PostgresStore",
    "SQLDatabase",
    "SQLStore",
    "SQLiteStore",
    "Statements",
    "Trace",
    "describe",
    "dumps",
    "write_atomically",
]
