"""SQLiteStore: sessions and long-term memory in one SQLite file, shared between processes.

Why the standard library's ``sqlite3``: it ships with Python, needs no server, and in WAL
mode lets one writer and many readers share a file across processes; a wrapper would add a
dependency without adding anything this store needs.

Every write is one transaction (``BEGIN IMMEDIATE``: the writer holds the file's write lock
from the version check to the commit), so a commit lands whole or not at all — a process
killed mid-run leaves the last committed version, which is always a valid conversation
because the runtime commits only at the end of a tool round and at ``persist``. Versions make
writers optimistic: a writer that built on an older version gets
:class:`~agentnb.errors.SessionConflict` naming both versions, and nothing is interleaved.
The statements are :class:`~agentnb.storage.sql.SQLStore`'s, shared with Postgres.

The schema version (``PRAGMA user_version``) is checked on open before anything is written:
a newer file or someone else's database is refused (:class:`~agentnb.errors.StoreError`)
and left unchanged; a file that cannot be written is opened read-only. Every SQLite or JSON
failure, on every path, is a ``StoreError`` with its cause.
"""

from __future__ import annotations

import os
import sqlite3
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import ConfigurationError, StoreError
from .database import SQLDatabase, Statements
from .sql import SQLStore

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

#: The layout of the file (``PRAGMA user_version``); 0 with our tables is the unversioned
#: layout of earlier releases, the same tables.
SCHEMA_VERSION = 1
_TABLES = frozenset({"sessions", "messages", "memories"})


class SQLiteStore(SQLStore):
    """Sessions in ``path`` (created if missing). Safe to share between processes.

    ``store.load(id)`` returns a session that commits back here; ``store.list()``,
    ``store.delete(id)``, ``store.export_jsonl(id, path)`` and ``store.import_jsonl(path)``.
    """

    name = "sqlite"

    def __init__(
        self, path: str | Path, *, timeout: float = 10.0, read_only: bool | None = None
    ) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigurationError(f"SQLiteStore needs a file path, {self.path} is a folder")
        exists = self.path.is_file() and self.path.stat().st_size > 0
        if read_only is None:  # what the filesystem allows
            writable = os.access(self.path if exists else self.path.parent, os.W_OK)
            read_only = exists and not (writable and os.access(self.path.parent, os.W_OK))
        self.read_only = read_only  #: opened read-only: a write raises StoreError
        self.timeout = timeout
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path} cannot be opened as an agentnb store: {exc}") from exc
        try:
            self.db = self.database()
        except StoreError as exc:
            raise self._not_ours(exc) from exc.__cause__
        try:
            self._check_schema()
        except BaseException:
            self.db.close()
            raise

    def _not_ours(self, exc: StoreError) -> StoreError:
        return StoreError(f"{self.path} cannot be used as an agentnb store: {exc.__cause__ or exc}")

    def database(self) -> SQLDatabase:
        """A connection of its own to this file (the service's task log has one)."""
        # a function of the settings, not a method: a store and its connection form no reference
        # cycle, so a store dropped without close() closes its file at once (Python 3.13 warns
        # about a connection the cyclic collector finds open)
        return SQLDatabase(
            partial(_connect, self.path, self.timeout, self.read_only),
            "sqlite",
            f"the SQLite store {self.path}",
            errors=(sqlite3.Error,),
        )

    def _check_schema(self) -> None:
        """Refuse a newer or a foreign file before writing anything; create or adopt ours."""
        try:
            ((version,),) = self.db.run("read the schema of", "PRAGMA user_version")
            rows = self.db.run("read", "SELECT name FROM sqlite_master WHERE type = 'table'")
        except StoreError as exc:
            raise self._not_ours(exc) from exc.__cause__
        tables = {name for (name,) in rows} - {"sqlite_sequence"}
        tables = {t for t in tables if not t.startswith("agentnb_")}  # the service's task log
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer agentnb (schema version {version}; this "
                f"one reads {SCHEMA_VERSION}): upgrade agentnb to open it. It was not changed."
            )
        ours = version == SCHEMA_VERSION or (version == 0 and tables == _TABLES)
        if not ours and (version != 0 or tables):
            raise StoreError(
                f"{self.path} is not an agentnb store (schema version {version}, tables "
                f"{sorted(tables)}); it was not changed. Give SQLiteStore a file of its own."
            )
        if self.read_only:
            if not ours:
                raise StoreError(f"{self.path} is read-only and holds no agentnb store")
            return

        def create(run: Statements) -> None:
            for statement in self.schema():
                run(statement)
            run(f"PRAGMA user_version = {SCHEMA_VERSION}")

        self.db.run("set up", "PRAGMA journal_mode=WAL")  # kept in the file: one writer, readers
        self.db.write("set up", create)

    def _write(self, session_id: str, base: int, messages: Any, *, replace: bool) -> int:
        self._writable(f"write session {session_id!r} to")
        return super()._write(session_id, base, messages, replace=replace)

    def delete(self, session_id: str) -> None:
        self._writable(f"delete session {session_id!r} from")
        super().delete(session_id)

    def add_memory(self, user: str, item: dict[str, Any], *, cap: int | None = None) -> int:
        self._writable(f"keep a memory of {user!r} in")
        return super().add_memory(user, item, cap=cap)

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only: cannot {what} it")

    def __repr__(self) -> str:
        return f"<SQLiteStore {str(self.path)!r}>"


def _connect(path: Path, timeout: float, read_only: bool) -> sqlite3.Connection:
    """Autocommit mode (transactions are opened explicitly, so BEGIN IMMEDIATE is ours)."""
    options: dict[str, Any] = {"timeout": timeout, "isolation_level": None}
    options["check_same_thread"] = False
    uri = f"file:{quote(str(path.resolve()))}?mode={'ro' if read_only else 'rwc'}"
    db: sqlite3.Connection = sqlite3.connect(uri, uri=True, **options)
    if not read_only:
        db.execute("PRAGMA synchronous=NORMAL")  # WAL (set once checked) + NORMAL: kill -9
        return db
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:  # WAL on a read-only filesystem: nobody can write
        db.close()
        db = sqlite3.connect(uri + "&immutable=1", uri=True, **options)
    return db
