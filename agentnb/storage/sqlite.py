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
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, StoreError
from ..session.store import BaseStore, Records, validate_session_id

__all__ = ["SQLiteStore"]

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


def _dump(message: dict[str, Any]) -> str:
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON's \u escape keeps it exactly
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"))
    return text


class SQLiteStore(BaseStore):
    """Sessions in ``path`` (created if missing). Safe to share between processes.

    ``store.load(id)`` returns a session that commits back here; ``store.list()``,
    ``store.delete(id)``, ``store.export_jsonl(id, path)`` and ``store.import_jsonl(path)``.
    """

    name = "sqlite"

    def __init__(self, path: str | Path, *, timeout: float = 10.0) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigurationError(f"SQLiteStore needs a file path, {self.path} is a folder")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: transactions are opened explicitly, so BEGIN IMMEDIATE is ours.
        self._db = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._lock = threading.Lock()  # one connection, used from the loop and worker threads
        try:
            with self._lock:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives kill -9
                self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"{self.path} cannot be used as an agentnb store: {exc}") from exc

    # -- reading ---------------------------------------------------------------------------
    def read(self, session_id: str) -> tuple[int, Records]:
        with self._lock:
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
        return int(row[0]), [json.loads(body) for (body,) in bodies]

    def list(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT id FROM sessions ORDER BY id").fetchall()
        return [r[0] for r in rows]

    def version(self, session_id: str) -> int:
        """The stored version of a session (0 when it has never been committed)."""
        with self._lock:
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
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
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
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return actual + 1

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=False)

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=True)

    def delete(self, session_id: str) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            gone = self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
            self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self._db.execute("COMMIT")
        if not gone:
            raise self._missing(session_id)

    # -- long-term memory ------------------------------------------------------------------
    def add_memory(self, user: str, item: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO memories (user_id, body, created) VALUES (?, ?, ?)",
                (user, _dump(item), time.time()),
            )

    def memories(self, user: str) -> Records:
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM memories WHERE user_id = ? ORDER BY id", (user,)
            ).fetchall()
        return [json.loads(body) for (body,) in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SQLiteStore {str(self.path)!r}>"
