"""PostgresStore: sessions and long-term memory in Postgres, where every worker reaches them.

The same contract as :class:`~agentnb.SQLiteStore`: a version per session that every write
increments, optimistic writers (a writer that built on an older version gets
:class:`~agentnb.errors.SessionConflict` naming both versions), each write one transaction
that lands whole or not at all. The version check holds the session's row lock
(``SELECT ... FOR UPDATE``) until the commit, so two workers never interleave.

Why psycopg 3: the maintained Postgres driver, sync and async, with binary wheels
(the ``service`` extra installs it).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigurationError, StoreError
from ..session.store import BaseStore, Records, validate_session_id
from .sqlite import _dump

__all__ = ["PostgresStore"]

Rows = list[tuple[int, dict[str, Any]]]

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS agentnb_sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
    "created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS agentnb_messages (session_id TEXT NOT NULL, "
    "position INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, position))",
    "CREATE TABLE IF NOT EXISTS agentnb_memories (id BIGSERIAL PRIMARY KEY, user_id TEXT NOT NULL, "
    "body TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS agentnb_memories_by_user ON agentnb_memories (user_id, id)",
]


class PostgresStore(BaseStore):
    """Sessions in the Postgres database at ``url`` (``postgresql://user@host:port/db``).

    Tables are created if missing (``agentnb_sessions``, ``agentnb_messages``,
    ``agentnb_memories``). Safe to share between processes and machines.
    """

    name = "postgres"

    def __init__(self, url: str, *, connect_timeout: float = 10.0) -> None:
        try:
            import psycopg
        except ImportError:
            raise ConfigurationError(
                "PostgresStore needs psycopg 3: pip install 'agentnb[service]'"
            ) from None
        self.url = url
        self._psycopg = psycopg
        self._lock = threading.Lock()
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=int(connect_timeout))
            with self._lock, self._db.transaction():  # IF NOT EXISTS races between processes
                self._db.execute("SELECT pg_advisory_xact_lock(7242000)")
                for statement in _SCHEMA:
                    self._db.execute(statement)
        except psycopg.Error as exc:
            raise StoreError(f"cannot use {self._safe_url()} as an agentnb store: {exc}") from exc

    def _safe_url(self) -> str:
        """The url without its password (never shown)."""
        head, at, tail = self.url.rpartition("@")
        if not at:
            return self.url
        scheme, _, user = head.partition("://")
        return f"{scheme}://{user.split(':')[0]}@{tail}"

    # -- reading ---------------------------------------------------------------------------
    def read(self, session_id: str) -> tuple[int, Records]:
        with self._lock:  # one statement: one snapshot for the version and the messages
            rows = self._db.execute(
                "SELECT s.version, m.body FROM agentnb_sessions s LEFT JOIN agentnb_messages m "
                "ON m.session_id = s.id WHERE s.id = %s ORDER BY m.position",
                (session_id,),
            ).fetchall()
        if not rows or rows[0][0] == 0:
            raise self._missing(session_id)
        return int(rows[0][0]), [json.loads(body) for _, body in rows if body is not None]

    def list(self) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM agentnb_sessions WHERE version > 0 ORDER BY id"
            ).fetchall()
        return [r[0] for r in rows]

    def version(self, session_id: str) -> int:
        """The stored version of a session (0 when it has never been committed)."""
        with self._lock:
            row = self._db.execute(
                "SELECT version FROM agentnb_sessions WHERE id = %s", (session_id,)
            ).fetchone()
        return int(row[0]) if row else 0

    # -- writing ---------------------------------------------------------------------------
    def _write(self, session_id: str, base: int, messages: Sequence[dict[str, Any]], *,
               replace: bool) -> int:  # fmt: skip
        validate_session_id(session_id)
        rows = [_dump(m) for m in messages]
        now = time.time()
        db = self._db
        with self._lock, db.transaction():
            db.execute(
                "INSERT INTO agentnb_sessions (id, version, created, updated) "
                "VALUES (%s, 0, %s, %s) ON CONFLICT (id) DO NOTHING",
                (session_id, now, now),
            )
            (actual,) = db.execute(  # the row lock: held until this transaction ends
                "SELECT version FROM agentnb_sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone() or (0,)
            if actual != base:
                raise self._conflict(session_id, base, actual)
            if replace:
                db.execute("DELETE FROM agentnb_messages WHERE session_id = %s", (session_id,))
                start = 0
            else:
                (last,) = db.execute(
                    "SELECT MAX(position) FROM agentnb_messages WHERE session_id = %s",
                    (session_id,),
                ).fetchone() or (None,)
                start = 0 if last is None else int(last) + 1
            with db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO agentnb_messages (session_id, position, body) VALUES (%s, %s, %s)",
                    [(session_id, start + i, body) for i, body in enumerate(rows)],
                )
            db.execute(
                "UPDATE agentnb_sessions SET version = %s, updated = %s WHERE id = %s",
                (actual + 1, now, session_id),
            )
        return int(actual) + 1

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=False)

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=True)

    def delete(self, session_id: str) -> None:
        db = self._db
        with self._lock, db.transaction():
            gone = db.execute(
                "DELETE FROM agentnb_sessions WHERE id = %s AND version > 0", (session_id,)
            ).rowcount
            db.execute("DELETE FROM agentnb_messages WHERE session_id = %s", (session_id,))
        if not gone:
            raise self._missing(session_id)

    # -- long-term memory (agentnb.context.memory.MemoryBackend) -----------------------------
    def add_memory(self, user: str, item: dict[str, Any], *, cap: int | None = None) -> int:
        """Keep ``item`` for ``user``; with ``cap``, only the newest ``cap`` items stay.
        Returns the item's id (increasing)."""
        db = self._db
        with self._lock, db.transaction():
            (row_id,) = db.execute(
                "INSERT INTO agentnb_memories (user_id, body, created) VALUES (%s, %s, %s) "
                "RETURNING id",
                (user, _dump(item), time.time()),
            ).fetchone() or (0,)
            if cap is not None:
                db.execute(
                    "DELETE FROM agentnb_memories WHERE user_id = %s AND id <= (SELECT id FROM "
                    "agentnb_memories WHERE user_id = %s ORDER BY id DESC LIMIT 1 OFFSET %s)",
                    (user, user, cap),
                )
        return int(row_id)

    def memory_rows(self, user: str, after: int = 0) -> Rows:
        """``(id, item)`` of ``user``'s items with an id above ``after``, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, body FROM agentnb_memories WHERE user_id = %s AND id > %s ORDER BY id",
                (user, after),
            ).fetchall()
        return [(int(i), json.loads(body)) for i, body in rows]

    def memories(self, user: str) -> Records:
        return [item for _, item in self.memory_rows(user)]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __del__(self) -> None:  # a store dropped without close() still closes its connection
        db = getattr(self, "_db", None)
        if db is not None and not db.closed:
            db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<PostgresStore {self._safe_url()!r}>"
