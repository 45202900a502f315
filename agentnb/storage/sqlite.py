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

The schema version (``PRAGMA user_version``) is checked on open before anything is written:
a newer file or someone else's database is refused (:class:`~agentnb.errors.StoreError`)
and left unchanged; a file that cannot be written is opened read-only. Every SQLite or JSON
failure, on every path, is a ``StoreError`` with its cause.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import _json
from ..errors import AgentnbError, ConfigurationError, StoreError
from ..session.store import BaseStore, Records, validate_session_id

Rows = list[tuple[int, dict[str, Any]]]

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

#: The layout of the file (``PRAGMA user_version``); 0 with our tables is the unversioned
#: layout of earlier releases, the same tables.
SCHEMA_VERSION = 1
_TABLES = frozenset({"sessions", "messages", "memories"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, version INTEGER NOT NULL, created REAL NOT NULL, updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL, position INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL, body TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_by_user ON memories (user_id, id);
"""


def _load(body: str) -> dict[str, Any]:
    value = json.loads(body)
    if not isinstance(value, dict):
        raise ValueError(f"a stored row is {type(value).__name__}, not an object")
    return value


def _dump(message: dict[str, Any]) -> str:
    return _json.dumps(message, separators=(",", ":"))  # lone surrogates kept exactly


class SQLiteStore(BaseStore):
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
        self._lock = threading.Lock()  # one connection, used from the loop and worker threads
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._connect(timeout)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path} cannot be opened as an agentnb store: {exc}") from exc
        try:
            self._check_schema()
        except BaseException:
            self._db.close()
            raise

    def _connect(self, timeout: float) -> sqlite3.Connection:
        """Autocommit mode (transactions are opened explicitly, so BEGIN IMMEDIATE is ours)."""
        options: dict[str, Any] = {"timeout": timeout, "isolation_level": None}
        options["check_same_thread"] = False
        uri = f"file:{quote(str(self.path.resolve()))}?mode={'ro' if self.read_only else 'rwc'}"
        db: sqlite3.Connection = sqlite3.connect(uri, uri=True, **options)
        if not self.read_only:
            return db
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:  # WAL on a read-only filesystem: nobody can write
            db.close()
            db = sqlite3.connect(uri + "&immutable=1", uri=True, **options)
        return db

    def _check_schema(self) -> None:
        """Refuse a newer or a foreign file before writing anything; create or adopt ours."""
        try:
            (version,) = self._db.execute("PRAGMA user_version").fetchone()
            rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            tables = {name for (name,) in rows} - {"sqlite_sequence"}
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path} cannot be used as an agentnb store: {exc}") from exc
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
        with self._guard("set up"):
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives kill -9
            with self._transaction():
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextlib.contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        with self._lock, self._guard(what, write=True), self._transaction():
            yield

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any failure (the caller holds the
        lock and the guard)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextlib.contextmanager
    def _guard(self, what: str, *, write: bool = False) -> Iterator[None]:
        """SQLite and JSON failures as StoreError (typed failures stay as they are)."""
        if write and self.read_only:
            raise StoreError(f"{self.path} is open read-only: cannot {what} it")
        try:
            yield
        except AgentnbError:
            raise
        except (sqlite3.Error, ValueError, TypeError, OSError) as exc:
            raise StoreError(f"the SQLite store {self.path} could not {what}: {exc}") from exc

    # -- reading ---------------------------------------------------------------------------
    def read(self, session_id: str) -> tuple[int, Records]:
        with self._lock, self._guard(f"read session {session_id!r} from"):
            self._db.execute("BEGIN")  # one snapshot for the version and the messages
            try:
                row = self._db.execute(
                    "SELECT version FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                bodies = self._db.execute(
                    "SELECT body FROM messages WHERE session_id = ? ORDER BY position",
                    (session_id,),
                ).fetchall()
            finally:
                self._db.execute("COMMIT")
            if row is None:
                raise self._missing(session_id)
            return int(row[0]), [_load(body) for (body,) in bodies]

    def list(self) -> list[str]:
        with self._lock, self._guard("list the sessions of"):
            rows = self._db.execute("SELECT id FROM sessions ORDER BY id").fetchall()
        return [r[0] for r in rows]

    def version(self, session_id: str) -> int:
        """The stored version of a session (0 when it has never been committed)."""
        with self._lock, self._guard(f"read the version of {session_id!r} in"):
            row = self._db.execute(
                "SELECT version FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        return int(row[0]) if row else 0

    # -- writing ---------------------------------------------------------------------------
    def _write(self, session_id: str, base: int, messages: Sequence[dict[str, Any]], *,
               replace: bool) -> int:  # fmt: skip
        validate_session_id(session_id)
        rows = [_dump(m) for m in messages]  # serialise before taking the lock
        now = time.time()
        with self._writing(f"write session {session_id!r} to"):
            row = self._db.execute(
                "SELECT version FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            actual = int(row[0]) if row else 0
            if actual != base:
                raise self._conflict(session_id, base, actual)
            if replace:
                self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                start = 0
            else:
                (last,) = self._db.execute(  # the primary key's index: no scan
                    "SELECT MAX(position) FROM messages WHERE session_id = ?", (session_id,)
                ).fetchone()
                start = 0 if last is None else int(last) + 1
            self._db.executemany(
                "INSERT INTO messages (session_id, position, body) VALUES (?, ?, ?)",
                [(session_id, start + i, body) for i, body in enumerate(rows)],
            )
            self._db.execute(
                "INSERT INTO sessions (id, version, created, updated) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET version = excluded.version, "
                "updated = excluded.updated",
                (session_id, actual + 1, now, now),
            )
        return actual + 1

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=False)

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=True)

    def delete(self, session_id: str) -> None:
        with self._writing(f"delete session {session_id!r} from"):
            gone = self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        if not gone.rowcount:
            raise self._missing(session_id)

    # -- long-term memory (agentnb.context.memory.MemoryBackend) -----------------------------
    def add_memory(self, user: str, item: dict[str, Any], *, cap: int | None = None) -> int:
        """Keep ``item`` for ``user``; with ``cap``, only the newest ``cap`` items stay.
        Returns the item's id (increasing)."""
        body = _dump(item)
        with self._writing(f"keep a memory of {user!r} in"):
            cursor = self._db.execute(
                "INSERT INTO memories (user_id, body, created) VALUES (?, ?, ?)",
                (user, body, time.time()),
            )
            row_id = int(cursor.lastrowid or 0)
            if cap is not None:  # by the (user_id, id) index
                self._db.execute(
                    "DELETE FROM memories WHERE user_id = ? AND id <= (SELECT id FROM "
                    "memories WHERE user_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
                    (user, user, cap),
                )
        return row_id

    def memory_rows(self, user: str, after: int = 0) -> Rows:
        """``(id, item)`` of ``user``'s items with an id above ``after``, oldest first."""
        with self._lock, self._guard(f"read the memory of {user!r} from"):
            rows = self._db.execute(
                "SELECT id, body FROM memories WHERE user_id = ? AND id > ? ORDER BY id",
                (user, after),
            ).fetchall()
            return [(int(i), _load(body)) for i, body in rows]

    def memories(self, user: str) -> Records:
        return [item for _, item in self.memory_rows(user)]

    def close(self) -> None:
        with self._lock, self._guard("close"):
            self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SQLiteStore {str(self.path)!r}>"
