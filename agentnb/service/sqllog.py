"""The task log in SQL: tables beside a SQLite or Postgres store's sessions.

``agentnb_tasks`` (one JSON row per task: its status and its attempts' run records; the
session length its input starts at; the worker that runs it; its tags, as canonical JSON
text ``tasks(tags=...)`` narrows its read with), ``agentnb_task_runs`` (one JSONL
trace per attempt, by run id) and ``agentnb_calls`` (side-effecting calls in flight, written
only while their worker is alive); the workers (:mod:`.workers`) and the approvals
(:mod:`.approvals`) keep tables of their own beside them. Every method is one statement or
one short transaction, so a process killed at any moment leaves each row whole.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from ..errors import ConfigurationError, StoreError
from ..events import Event
from ..storage import SQLDatabase, Statements, Trace
from .approvals import MemoryApprovals, SQLApprovals
from .rows import task_from_row, task_row
from .tasks import TaskState
from .workers import Workers

__all__ = ["SQLTaskLog"]

logger = logging.getLogger("agentnb.service")


_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS agentnb_tasks (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, "
    "body TEXT NOT NULL, start_len INTEGER)",
    "CREATE TABLE IF NOT EXISTS agentnb_task_runs (task_id TEXT NOT NULL, run_id TEXT NOT NULL, "
    "position DOUBLE PRECISION NOT NULL, body TEXT NOT NULL, PRIMARY KEY (task_id, run_id))",
    "CREATE TABLE IF NOT EXISTS agentnb_calls (task_id TEXT NOT NULL, call_id TEXT NOT NULL, "
    "session_id TEXT NOT NULL, version INTEGER NOT NULL, tool TEXT NOT NULL, "
    "assistant TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (task_id, version, call_id))",
]


class SQLTaskLog:
    """The log in tables beside a SQL store's sessions, on a connection of its own.

    Every method is one statement or one short transaction, so a process killed at any
    moment leaves each row whole; failures are the store's typed ``StoreError``.
    """

    persistent = True

    def __init__(self, db: SQLDatabase) -> None:
        self.db = db
        #: The id of the worker writing here (side-effecting calls are journalled only while
        #: it is alive: see :mod:`.workers`); None when this process runs no tasks.
        self.worker: str | None = None

        def create(run: Statements) -> None:
            if db.dialect == "postgres":  # CREATE ... IF NOT EXISTS races between processes
                run("SELECT pg_advisory_xact_lock(7242001)")
            for statement in _SCHEMA:
                run(statement)
            have = set()  # who runs a task, and its status (a first release's table lacks them)
            if db.dialect == "sqlite":
                have = {row[1] for row in run("PRAGMA table_info(agentnb_tasks)")}
            for column in ("owner", "status", "tags"):
                if db.dialect == "postgres":
                    run(f"ALTER TABLE agentnb_tasks ADD COLUMN IF NOT EXISTS {column} TEXT")
                elif column not in have:
                    run(f"ALTER TABLE agentnb_tasks ADD COLUMN {column} TEXT")

        db.write("set up the task log in", create)
        self.workers = Workers(db)
        self.approvals: MemoryApprovals | SQLApprovals = SQLApprovals(db)

    def _run(self, what: str, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self.db.run(what, sql, args)

    def put(self, task: TaskState) -> None:
        body = json.dumps(task_row(task), ensure_ascii=False)
        self._run(
            f"keep task {task.id} in",
            "INSERT INTO agentnb_tasks (id, session_id, body, owner, status, tags) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body, "
            "owner = COALESCE(excluded.owner, agentnb_tasks.owner), status = excluded.status",
            (task.id, task.session_id, body, task.owner, task.status, _tags(task.tags)),
        )

    def admit(self, task: TaskState, limit: int) -> int | None:
        """Keep ``task`` if fewer than ``limit`` tasks wait to start (one transaction, so
        submitters in any process never admit more); else the number that wait."""
        body = json.dumps(task_row(task), ensure_ascii=False)

        def work(run: Statements) -> int | None:
            if self.db.dialect == "postgres":  # submitters queue up here, one at a time
                run("SELECT pg_advisory_xact_lock(7242004)")
            ((waiting,),) = run("SELECT COUNT(*) FROM agentnb_tasks WHERE status = 'pending'")
            if int(waiting) >= limit:
                return int(waiting)
            run(
                "INSERT INTO agentnb_tasks (id, session_id, body, owner, status, tags) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (task.id, task.session_id, body, task.owner, task.status, _tags(task.tags)),
            )
            return None

        return self.db.write(f"admit task {task.id} to", work, task.id)

    def drop(self, task_id: str) -> None:
        """Forget a task that was never queued after all."""
        self._run(f"drop task {task_id} from", "DELETE FROM agentnb_tasks WHERE id = ?", (task_id,))

    def get(self, task_id: str) -> TaskState | None:
        rows = self._run(
            f"read task {task_id!r} from",
            "SELECT id, session_id, body, owner FROM agentnb_tasks WHERE id = ?",
            (task_id,),
        )
        return _task(*rows[0]) if rows else None

    def tasks(
        self, session_id: str | None = None, tags: dict[str, str] | None = None
    ) -> list[TaskState]:
        where, args = [], []
        if session_id is not None:
            where.append("session_id = ?")
            args.append(session_id)
        for name, value in sorted((tags or {}).items()):  # narrows the read; checked below
            where.append("tags LIKE ? ESCAPE '!'")
            args.append(f"%{_like(json.dumps({name: value}, ensure_ascii=False)[1:-1])}%")
        sql = "SELECT id, session_id, body, owner FROM agentnb_tasks"
        if where:
            sql += " WHERE " + " AND ".join(where)
        what = "read the tasks of" if session_id is None else f"read the tasks of {session_id!r} in"
        found = [_task(*row) for row in self._run(what, sql + " ORDER BY id", tuple(args))]
        return [t for t in found if tags.items() <= t.tags.items()] if tags else found

    def claim(self, task_id: str, owner: str, previous: str | None) -> bool:
        """Make ``owner`` run the task if ``previous`` still does: True for the one claimer
        that won (two processes recovering the same task: one of them)."""
        was = "owner IS NULL" if previous is None else "owner = ?"
        rows = self._run(
            f"claim task {task_id} in",
            f"UPDATE agentnb_tasks SET owner = ? WHERE id = ? AND {was} RETURNING id",
            (owner, task_id) if previous is None else (owner, task_id, previous),
        )
        return bool(rows)

    def start_len(self, task_id: str, length: int) -> int:
        what = f"keep where task {task_id}'s input goes in"
        self._run(
            what,
            "UPDATE agentnb_tasks SET start_len = ? WHERE id = ? AND start_len IS NULL",
            (length, task_id),
        )
        rows = self._run(what, "SELECT start_len FROM agentnb_tasks WHERE id = ?", (task_id,))
        return int(rows[0][0]) if rows and rows[0][0] is not None else length

    def put_trace(self, task_id: str, run_id: str, events: list[Event]) -> None:
        position = events[0].wall if events else time.time()
        self._run(
            f"keep the trace of task {task_id} in",
            "INSERT INTO agentnb_task_runs (task_id, run_id, position, body) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (task_id, run_id) DO UPDATE SET body = excluded.body",
            (task_id, run_id, position, Trace(events).to_jsonl()),
        )

    def trace(self, task_id: str) -> list[Event]:
        rows = self._run(
            f"read the trace of task {task_id!r} from",
            "SELECT body FROM agentnb_task_runs WHERE task_id = ? ORDER BY position, run_id",
            (task_id,),
        )
        return [event for (body,) in rows for event in Trace.from_jsonl(body)]

    def begin_call(
        self,
        task_id: str,
        session_id: str,
        version: int,
        call_id: str,
        tool: str,
        assistant: dict[str, Any],
    ) -> None:
        worker = self.worker
        what = f"journal call {call_id} of task {task_id} in"

        def work(run: Statements) -> None:
            if worker is not None:  # the fence: a worker declared dead runs no side effect
                rows = run("SELECT state FROM agentnb_workers WHERE id = ?", (worker,))
                if not rows or rows[0][0] != "alive":
                    raise StoreError(
                        f"worker {worker} was declared dead by another (its lease lapsed): "
                        f"call {call_id} of task {task_id} was not run; its taker goes on"
                    )
            run(
                "INSERT INTO agentnb_calls "
                "(task_id, call_id, session_id, version, tool, assistant, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id, version, call_id) DO NOTHING",
                (
                    task_id,
                    call_id,
                    session_id,
                    version,
                    tool,
                    json.dumps(assistant, ensure_ascii=False),
                    time.time(),
                ),
            )

        self.db.write(what, work, task_id, call_id)

    def open_calls(self, task_id: str) -> list[dict[str, Any]]:
        rows = self._run(
            f"read the journal of task {task_id} from",
            "SELECT call_id, session_id, version, tool, assistant FROM agentnb_calls "
            "WHERE task_id = ? ORDER BY at",
            (task_id,),
        )
        return [
            {"call_id": c, "session_id": s, "version": v, "tool": t, "assistant": json.loads(a)}
            for c, s, v, t, a in rows
        ]

    def end_task(self, task_id: str) -> None:
        self._run(
            f"clear the journal of task {task_id} in",
            "DELETE FROM agentnb_calls WHERE task_id = ?",
            (task_id,),
        )

    def close(self) -> None:
        self.db.close()


def _tags(tags: dict[str, str]) -> str | None:
    """A task's tags as the column keeps them: canonical JSON (sorted keys), or NULL."""
    return json.dumps(tags, ensure_ascii=False, sort_keys=True) if tags else None


def _like(text: str) -> str:
    """``text`` matched literally by ``LIKE ... ESCAPE '!'``."""
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")


def _task(task_id: str, session_id: str, body: str, owner: str | None) -> TaskState:
    """The task a row keeps; a row that cannot be read (torn, or written by hand) is shown as a
    task in error that says so - listed, never run, the row left as it is."""
    try:
        task = task_from_row(json.loads(body))
    except (ValueError, TypeError, KeyError, ConfigurationError) as exc:
        logger.warning("task %s: its row in the task log cannot be read: %s", task_id, exc)
        why = f"its row in the task log cannot be read ({type(exc).__name__}: {exc}); left as is"
        task = TaskState(task_id, session_id, "", status="error", error=why)
    task.owner = owner
    return task
