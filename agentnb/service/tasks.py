"""Tasks: one submitted message on one session, from the queue to its end (002 §3.1).

Each fact of a task has one home. The task's :class:`TaskState` keeps its status and its
attempts, each attempt one run of the agent whose outcome is the run's own
:class:`~agentnb.session.RunRecord` (in ``session.runs``): its ``run_id``, its tags (the
task's own, and ``task_id`` and ``attempt``), its usage kept live, its latency. The task's
``trace_id`` is its first run's (every attempt runs under it): a task that never ran has
none. :class:`TaskInfo`, the read-only snapshot ``status``, ``list`` and the queue view hand
out, is computed from them by :meth:`TaskState.info`, the one function that does, when it is
read: nothing is rebuilt as the task makes progress.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import AgentnbError

if TYPE_CHECKING:
    import asyncio

    from ..runtime import Run
    from ..session import RunRecord

__all__ = [
    "FINAL",
    "LOST",
    "STATUSES",
    "QueueFull",
    "TaskInfo",
    "TaskNotFound",
    "TaskState",
    "attempt_status",
    "new_task_id",
]

#: The detail of an attempt whose worker stopped (a crash, a kill) before the run ended.
LOST = "lost: its worker stopped before the run ended; the next attempt resumed the task"

Status = Literal["pending", "running", "paused", "awaiting_approval", "done", "error", "cancelled"]
#: Every status a task can have; the last three are final.
STATUSES: tuple[Status, ...] = (
    "pending",
    "running",
    "paused",
    "awaiting_approval",
    "done",
    "error",
    "cancelled",
)
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


def attempt_status(record: RunRecord) -> str:
    """What an attempt's record says of it: running (no stop yet), done, error or cancelled."""
    reason = record.stop_reason
    if reason is None:
        return "running"
    return reason if reason in ("error", "cancelled") else "done"


@dataclass(slots=True)
class TaskInfo:
    """A snapshot of one task: where it is, how far it got, why it stopped. Immutable by
    convention, as events are (a frozen dataclass costs twice as much to build: one is built
    whenever a task is read)."""

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
    #: Seconds its attempts ran, each its run's ``latency`` (the running one's up to now);
    #: the queue and the waits between attempts are not in it. None before it ran.
    latency: float | None
    created: float
    trace_id: str  # its runs' ("" until the first one starts)
    #: One row per attempt, read from its run's record (``attempt``, ``run_id``, ``status``,
    #: ``stop_reason``, ``error``, ``lost``, ``iterations``, ``tokens``, ``latency``,
    #: ``started``).
    attempts: tuple[dict[str, Any], ...] = ()
    #: What it was submitted as (``rt.submit(..., tags=...)``): what ``rt.list(tags=)``
    #: matches.
    tags: dict[str, str] = field(default_factory=dict)
    #: The records of its runs, in order (the same as in ``session.runs``): what the figures
    #: above are read from, and what else a run's record says (its tags, its annotations).
    runs: tuple[RunRecord, ...] = ()

    @property
    def done(self) -> bool:
        return self.status in FINAL

    def row(self) -> dict[str, Any]:
        """A JSON-ready dict (the queue view's row)."""
        skip = ("attempts", "tags", "runs")
        return {name: getattr(self, name) for name in self.__slots__ if name not in skip} | {
            "attempts": list(self.attempts),
            "tags": dict(self.tags),
        }

    def __repr__(self) -> str:
        why = f" ({self.stop_reason})" if self.stop_reason else ""
        return (
            f"<Task {self.id} on {self.session_id!r}: {self.status}{why}, attempt {self.attempt}>"
        )


@dataclass(eq=False, slots=True)
class TaskState:
    """The service's own, mutable record of one task: its status and its attempts' runs.

    Hand out :meth:`info` snapshots. The fields after ``start_len`` live in this process only
    (the task log keeps the others).
    """

    id: str
    session_id: str
    text: str
    status: Status = "pending"
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    #: One record per attempt, in order: each run's outcome, where its messages are, usage.
    runs: list[RunRecord] = field(default_factory=list)
    #: Why the task ended when no run says it (cancelled before it ran, the runtime closed).
    error: str | None = None
    #: What it was submitted as; every attempt's run carries them (and its own ``task_id``
    #: and ``attempt``).
    tags: dict[str, str] = field(default_factory=dict)
    #: The session's length before this task's input (where its messages start).
    start_len: int | None = None
    #: The worker that runs it (or last did, or submitted it): see :mod:`.workers`.
    owner: str | None = None
    run: Run | None = None  # the attempt running now, in this process
    #: Set when a policy ended it: "interrupt" or "rollback" (its messages then go).
    ended_by: str | None = None
    cancel_requested: bool = False
    stepped: bool = False  # driven by run_step from outside, not by the workers
    future: asyncio.Future[TaskInfo] | None = None

    @property
    def attempt(self) -> int:
        """How many attempts it made: its last run's ``attempt`` tag (a job's attempt may
        make several runs; a record of an earlier release has no tag: one run each)."""
        runs = self.runs
        return int(runs[-1].tags.get("attempt", len(runs))) if runs else 0

    @property
    def trace_id(self) -> str:
        """The task's one trace: its first run's ("" until one started)."""
        return self.runs[0].trace_id if self.runs else ""

    def run_tags(self) -> dict[str, str]:
        """The tags of the task's next attempt's run."""
        return {**self.tags, "task_id": self.id, "attempt": str(self.attempt + 1)}

    def iterations(self) -> list[int]:
        """The model calls of each run, from its record; the running one's as they are now
        (its record gets them when it ends)."""
        found = [r.iterations for r in self.runs]
        run = self.run
        if run is not None and not run.done and found and self.runs[-1] is run.record:
            found[-1] = run.iteration
        return found

    def info(self) -> TaskInfo:
        """The task as a snapshot: computed here, from its status and its runs' records (one
        pass over them, when it is read)."""
        runs, status = self.runs, self.status
        last = runs[-1] if runs else None
        stop = output = None
        error = self.error
        if status == "done" and last is not None:
            stop, output = last.stop_reason, last.output
        elif status in FINAL:  # error or cancelled: the status is the reason
            stop = status
            if error is None and status == "error" and last is not None:
                error = last.detail or None
        now, tokens, latency, its = time.time(), 0, 0.0, 0
        attempts = []
        for n, (r, its) in enumerate(zip(runs, self.iterations(), strict=True), 1):
            reason, detail, used = r.stop_reason, r.detail, r.usage.total_tokens
            took = max(now - r.started, 0.0) if reason is None else r.latency
            tokens += used
            latency += took
            attempts.append(
                {
                    "attempt": int(r.tags.get("attempt", n)),
                    "run_id": r.run_id,
                    "status": attempt_status(r),
                    "stop_reason": reason,
                    "error": detail if reason == "error" else None,
                    "lost": detail == LOST,  # its worker died under it; a later attempt went on
                    "iterations": its,
                    "tokens": used,
                    "latency": took,
                    "started": r.started,
                }
            )
        return TaskInfo(
            self.id,
            self.session_id,
            self.text,
            status,
            self.attempt,
            its,
            tokens,
            stop,
            output,
            error,
            latency if runs else None,
            self.created,
            self.trace_id,
            tuple(attempts),
            dict(self.tags),
            tuple(runs),
        )
