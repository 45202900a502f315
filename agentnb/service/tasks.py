"""Tasks: one submitted message on one session, from the queue to its end (002 §3.1).

A task is what the service keeps for one ``submit(session_id, text)``: its status, its
attempts (each one run of the agent, with its own ``run_id``; one ``trace_id`` for the
task), and what it produced. :class:`TaskInfo` is the read-only snapshot handed out by
``status``, ``list`` and the queue view; :class:`Task` is the service's own record.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import AgentnbError

if TYPE_CHECKING:
    import asyncio

    from ..events import Event
    from ..runtime.run import Run, RunResult

__all__ = ["STATUSES", "QueueFull", "Task", "TaskInfo", "TaskNotFound", "new_task_id"]

Status = Literal["pending", "running", "paused", "done", "error", "cancelled"]
#: Every status a task can have; the last three are final.
STATUSES: tuple[Status, ...] = ("pending", "running", "paused", "done", "error", "cancelled")
FINAL = frozenset({"done", "error", "cancelled"})


class QueueFull(AgentnbError):
    """The runtime's queue holds ``max_queue`` tasks and its policy is ``on_full="reject"``."""

    def __init__(self, message: str, depth: int) -> None:
        super().__init__(message)
        self.depth = depth


class TaskNotFound(AgentnbError, KeyError):
    """No task with this id was submitted to this runtime (or kept by its store)."""

    def __init__(self, message: str, task_id: str) -> None:
        super().__init__(message)
        self.task_id = task_id

    def __str__(self) -> str:
        return self.message


_last_ns = [0]


def new_task_id() -> str:
    """``t-`` + 16 hex digits of the clock (strictly increasing here) + 6 random ones.

    Ids sort in submission order: an engine that breaks ties of its timestamps by id (DBOS
    on SQLite stores seconds) still runs a session's tasks in the order they came.
    """
    now = _last_ns[0] = max(time.time_ns(), _last_ns[0] + 1)
    return f"t-{now:016x}{os.urandom(3).hex()}"


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """A snapshot of one task: where it is, how far it got, why it stopped."""

    id: str
    session_id: str
    text: str
    status: Status
    attempt: int
    iteration: int
    tokens: int
    stop_reason: str | None
    output: str | None
    error: str | None
    latency: float | None  # seconds from start to end (or to now while it runs)
    created: float
    trace_id: str
    attempts: tuple[dict[str, Any], ...] = ()

    @property
    def done(self) -> bool:
        return self.status in FINAL

    def row(self) -> dict[str, Any]:
        """The JSON-ready dict the queue view and the task log keep."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "text": self.text,
            "status": self.status,
            "attempt": self.attempt,
            "iteration": self.iteration,
            "tokens": self.tokens,
            "stop_reason": self.stop_reason,
            "output": self.output,
            "error": self.error,
            "latency": self.latency,
            "created": self.created,
            "trace_id": self.trace_id,
            "attempts": list(self.attempts),
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> TaskInfo:
        data = dict(row)
        data["attempts"] = tuple(data.get("attempts") or ())
        return cls(**data)

    def __repr__(self) -> str:
        why = f" ({self.stop_reason})" if self.stop_reason else ""
        return (
            f"<Task {self.id} on {self.session_id!r}: {self.status}{why}, attempt {self.attempt}>"
        )


@dataclass(eq=False)
class Task:
    """The service's record of one task (mutable; hand out :meth:`info` snapshots)."""

    id: str
    session_id: str
    text: str
    trace_id: str = field(default_factory=lambda: os.urandom(16).hex())
    status: Status = "pending"
    attempt: int = 0
    iteration: int = 0
    tokens: int = 0
    stop_reason: str | None = None
    output: str | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    #: The session's length before this task's input (where its messages start).
    start_len: int | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    run: Run | None = None
    result: RunResult | None = None
    #: Set when a policy ended it: "interrupt" or "rollback" (its messages then go).
    ended_by: str | None = None
    cancel_requested: bool = False
    stepped: bool = False  # driven by run_step from outside, not by the workers
    future: asyncio.Future[TaskInfo] | None = None

    def info(self) -> TaskInfo:
        end = self.finished if self.finished is not None else time.time()
        latency = None if self.started is None else round(end - self.started, 6)
        return TaskInfo(
            self.id,
            self.session_id,
            self.text,
            self.status,
            self.attempt,
            self.iteration,
            self.tokens,
            self.stop_reason,
            self.output,
            self.error,
            latency,
            self.created,
            self.trace_id,
            tuple(self.attempts),
        )
