"""The task log: tasks, their attempts' traces and their in-flight side-effecting calls, kept
where the sessions are.

A service must answer ``status`` and ``get_trace`` for a task id after its process
restarted, and a worker must know, after a crash, which side-effecting calls were in flight.
So the log lives in the session store's own database: a dict for a :class:`MemoryStore`
(:class:`MemoryTaskLog`, here), tables beside the sessions for :class:`~agentnb.SQLiteStore`
and :class:`~agentnb.storage.postgres.PostgresStore`, which every worker reaches
(:class:`~agentnb.service.sqllog.SQLTaskLog`).
"""

from __future__ import annotations

from typing import Any, Protocol

from ..events import Event
from ..storage import SQLStore
from .approvals import MemoryApprovals, SQLApprovals
from .sqllog import SQLTaskLog
from .tasks import TaskState

__all__ = ["MemoryTaskLog", "SQLTaskLog", "TaskLog", "task_log_for"]


class TaskLog(Protocol):
    """What the service keeps of its tasks (see the module docstring)."""

    #: True when the log outlives the process (tasks and traces are read back from it).
    persistent: bool
    #: The calls waiting for a person's yes (see :mod:`.approvals`).
    approvals: MemoryApprovals | SQLApprovals

    def put(self, task: TaskState) -> None: ...
    def get(self, task_id: str) -> TaskState | None: ...
    def tasks(  # in submission order; with tags, at least the tasks that carry them
        self, session_id: str | None = None, tags: dict[str, str] | None = None
    ) -> list[TaskState]: ...
    def start_len(self, task_id: str, length: int) -> int: ...  # set once, then read back
    def put_trace(self, task_id: str, run_id: str, events: list[Event]) -> None: ...
    def trace(self, task_id: str) -> list[Event]: ...  # every attempt's events, in order
    def begin_call(  # a side-effecting call is about to run in the round built on version
        self,
        task_id: str,
        session_id: str,
        version: int,
        call_id: str,
        tool: str,
        assistant: dict[str, Any],
    ) -> None: ...
    def open_calls(self, task_id: str) -> list[dict[str, Any]]: ...
    def end_task(self, task_id: str) -> None: ...


class MemoryTaskLog:
    """The log of a runtime whose store is in memory (it dies with the process): it keeps
    the task objects and event lists themselves."""

    persistent = False

    def __init__(self) -> None:
        self.approvals: MemoryApprovals | SQLApprovals = MemoryApprovals()
        self._tasks: dict[str, TaskState] = {}  # in submission order
        self._by_session: dict[str, dict[str, TaskState]] = {}
        self._start: dict[str, int] = {}
        self._traces: dict[str, dict[str, list[Event]]] = {}
        self._calls: dict[str, list[dict[str, Any]]] = {}

    def put(self, task: TaskState) -> None:
        if task.id not in self._tasks:  # kept in submission order: a task is put when submitted
            self._by_session.setdefault(task.session_id, {})[task.id] = task
        self._tasks[task.id] = task

    def get(self, task_id: str) -> TaskState | None:
        return self._tasks.get(task_id)

    def tasks(
        self, session_id: str | None = None, tags: dict[str, str] | None = None
    ) -> list[TaskState]:
        if session_id is None:
            found = list(self._tasks.values())
        else:
            found = list(self._by_session.get(session_id, {}).values())
        if tags:
            found = [t for t in found if tags.items() <= t.tags.items()]
        return found

    def start_len(self, task_id: str, length: int) -> int:
        return self._start.setdefault(task_id, length)

    def forget(self, task_id: str) -> None:
        """Drop a finished task and its traces (the runtime keeps so many finished ones)."""
        task = self._tasks.get(task_id)
        if task is not None:
            mine = self._by_session[task.session_id]
            del mine[task_id]
            if not mine:
                del self._by_session[task.session_id]
        for kept in (self._tasks, self._start, self._traces, self._calls):
            kept.pop(task_id, None)
        if isinstance(self.approvals, MemoryApprovals):
            self.approvals.forget(task_id)

    def put_trace(self, task_id: str, run_id: str, events: list[Event]) -> None:
        self._traces.setdefault(task_id, {})[run_id] = events

    def trace(self, task_id: str) -> list[Event]:
        return [e for events in self._traces.get(task_id, {}).values() for e in events]

    def begin_call(
        self,
        task_id: str,
        session_id: str,
        version: int,
        call_id: str,
        tool: str,
        assistant: dict[str, Any],
    ) -> None:
        row = {
            "call_id": call_id,
            "session_id": session_id,
            "version": version,
            "tool": tool,
            "assistant": assistant,
        }
        self._calls.setdefault(task_id, []).append(row)

    def open_calls(self, task_id: str) -> list[dict[str, Any]]:
        return list(self._calls.get(task_id, ()))

    def end_task(self, task_id: str) -> None:
        self._calls.pop(task_id, None)


def task_log_for(store: Any) -> TaskLog:
    """The log kept beside ``store``'s sessions (a dict for stores in memory)."""
    if isinstance(store, SQLStore):
        return SQLTaskLog(store.database())
    return MemoryTaskLog()
