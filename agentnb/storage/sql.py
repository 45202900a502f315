"""SQLStore: sessions and long-term memories in SQL tables, for SQLite and Postgres alike.

The contract of every agentnb store, in one set of statements: a version per session that
every write increments, :class:`~agentnb.errors.SessionConflict` for a writer that built on
an older one, each write one transaction that lands whole or not at all (the version check
holds SQLite's write lock, or the session's row lock on Postgres, to the commit).
:class:`~agentnb.SQLiteStore` and :class:`~agentnb.storage.postgres.PostgresStore` add how
they open their database (:class:`~agentnb.storage.database.SQLDatabase`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..session.session import SessionStore
from ..session.store import Records, validate_session_id
from .database import SQLDatabase, Statements, dump, load

__all__ = ["SQLStore"]

Rows = list[tuple[int, dict[str, Any]]]


class SQLStore(SessionStore):
    """Sessions and memories in the tables ``{prefix}sessions``, ``{prefix}messages`` and
    ``{prefix}memories`` of :attr:`db`."""

    db: SQLDatabase
    prefix = ""

    def database(self) -> SQLDatabase:
        """A connection of its own to the same database (the service's task log has one)."""
        raise NotImplementedError

    def schema(self) -> list[str]:
        p = self.prefix
        return [
            f"CREATE TABLE IF NOT EXISTS {p}sessions (id TEXT PRIMARY KEY, "
            "version INTEGER NOT NULL, created DOUBLE PRECISION NOT NULL, "
            "updated DOUBLE PRECISION NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {p}messages (session_id TEXT NOT NULL, "
            "position INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, position))"
            + (" WITHOUT ROWID" if self.db.dialect == "sqlite" else ""),
            f"CREATE TABLE IF NOT EXISTS {p}memories ("
            + (
                "id INTEGER PRIMARY KEY AUTOINCREMENT"
                if self.db.dialect == "sqlite"
                else "id BIGSERIAL PRIMARY KEY"
            )
            + ", user_id TEXT NOT NULL, body TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
            f"CREATE INDEX IF NOT EXISTS {p}memories_by_user ON {p}memories (user_id, id)",
        ]

    # -- reading ---------------------------------------------------------------------------
    def read(self, session_id: str) -> tuple[int, Records]:
        p = self.prefix
        rows = self.db.run(  # one statement: one snapshot of the version and the messages
            f"read session {session_id!r} from",
            f"SELECT s.version, m.body FROM {p}sessions s LEFT JOIN {p}messages m "
            "ON m.session_id = s.id WHERE s.id = ? ORDER BY m.position",
            (session_id,),
        )
        if not rows or rows[0][0] == 0:
            raise self._missing(session_id)
        with self.db.guard(f"read session {session_id!r} from"):
            return int(rows[0][0]), [load(body) for _, body in rows if body is not None]

    def list(self) -> list[str]:
        rows = self.db.run(
            "list the sessions of",
            f"SELECT id FROM {self.prefix}sessions WHERE version > 0 ORDER BY id",
        )
        return [r[0] for r in rows]

    def version(self, session_id: str) -> int:
        """The stored version of a session (0 when it has never been committed)."""
        rows = self.db.run(
            f"read the version of {session_id!r} in",
            f"SELECT version FROM {self.prefix}sessions WHERE id = ?",
            (session_id,),
        )
        return int(rows[0][0]) if rows else 0

    # -- writing ---------------------------------------------------------------------------
    def _write(
        self, session_id: str, base: int, messages: Sequence[dict[str, Any]], *, replace: bool
    ) -> int:
        validate_session_id(session_id)
        with self.db.guard(f"write session {session_id!r} to"):
            bodies = [dump(m) for m in messages]  # serialised before taking the lock
        p, now = self.prefix, time.time()
        lock = " FOR UPDATE" if self.db.dialect == "postgres" else ""

        def work(run: Statements) -> int:
            run(
                f"INSERT INTO {p}sessions (id, version, created, updated) VALUES (?, 0, ?, ?) "
                "ON CONFLICT (id) DO NOTHING",
                (session_id, now, now),
            )
            # the row lock (Postgres) or the file's write lock (SQLite): held to the commit
            ((actual,),) = run(f"SELECT version FROM {p}sessions WHERE id = ?{lock}", (session_id,))
            if actual != base:
                raise self._conflict(session_id, base, int(actual))
            if replace:
                run(f"DELETE FROM {p}messages WHERE session_id = ?", (session_id,))
                start = 0
            else:
                ((last,),) = run(  # the primary key's index: no scan
                    f"SELECT MAX(position) FROM {p}messages WHERE session_id = ?", (session_id,)
                )
                start = 0 if last is None else int(last) + 1
            run.many(
                f"INSERT INTO {p}messages (session_id, position, body) VALUES (?, ?, ?)",
                [(session_id, start + i, body) for i, body in enumerate(bodies)],
            )
            run(
                f"UPDATE {p}sessions SET version = ?, updated = ? WHERE id = ?",
                (int(actual) + 1, now, session_id),
            )
            return int(actual) + 1

        return self.db.write(f"write session {session_id!r} to", work, session_id, *bodies)

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=False)

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        return self._write(session_id, base, messages, replace=True)

    def delete(self, session_id: str) -> None:
        p = self.prefix

        def work(run: Statements) -> bool:
            gone = run(
                f"DELETE FROM {p}sessions WHERE id = ? AND version > 0 RETURNING id", (session_id,)
            )
            run(f"DELETE FROM {p}messages WHERE session_id = ?", (session_id,))
            return bool(gone)

        if not self.db.write(f"delete session {session_id!r} from", work, session_id):
            raise self._missing(session_id)

    # -- long-term memory (agentnb.context.memory.MemoryBackend) -----------------------------
    def add_memory(self, user: str, item: dict[str, Any], *, cap: int | None = None) -> int:
        """Keep ``item`` for ``user``; with ``cap``, only the newest ``cap`` items stay.
        Returns the item's id (increasing)."""
        with self.db.guard(f"keep a memory of {user!r} in"):
            body = dump(item)
        p = self.prefix

        def work(run: Statements) -> int:
            ((row_id,),) = run(
                f"INSERT INTO {p}memories (user_id, body, created) VALUES (?, ?, ?) RETURNING id",
                (user, body, time.time()),
            )
            if cap is not None:  # by the (user_id, id) index
                run(
                    f"DELETE FROM {p}memories WHERE user_id = ? AND id <= (SELECT id FROM "
                    f"{p}memories WHERE user_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
                    (user, user, cap),
                )
            return int(row_id)

        return self.db.write(f"keep a memory of {user!r} in", work, user, body)

    def memory_rows(self, user: str, after: int = 0) -> Rows:
        """``(id, item)`` of ``user``'s items with an id above ``after``, oldest first."""
        rows = self.db.run(
            f"read the memory of {user!r} from",
            f"SELECT id, body FROM {self.prefix}memories WHERE user_id = ? AND id > ? ORDER BY id",
            (user, after),
        )
        with self.db.guard(f"read the memory of {user!r} from"):
            return [(int(i), load(body)) for i, body in rows]

    def memories(self, user: str) -> Records:
        return [item for _, item in self.memory_rows(user)]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SQLStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
