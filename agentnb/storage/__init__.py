"""Where sessions and runs are kept beyond the process: the SQLite store, traces and the one
event codec they share.

Public here, for the periphery (``agentnb.service`` keeps its task log beside a store's
sessions, on the store's own database): :class:`SQLStore` (what a SQLite or Postgres store
shares), :class:`SQLDatabase` and :class:`Statements` (one connection, one transaction at a
time, each failure a typed ``StoreError``), :class:`PostgresStore` and :func:`describe` (a
Postgres connection string safe to show, and its credentials to mask).
"""

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
]
