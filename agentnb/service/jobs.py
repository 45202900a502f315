"""Jobs: tasks whose attempts a function runs, in place of the runtime's agent on their text.

A task is one kind of thing on every backend: a row in the task log, a workflow on DBOS, its
attempts' runs in ``session.runs``. Most tasks run the runtime's agent on their text. A task
submitted with a ``job`` tag, ``rt.submit(session_id, text, tags={"job": name, ...})``, is
run by the :class:`Job` the runtime serves under that name (``rt.serve(name, job)``, in the
process that runs it: a worker serves its jobs too). The job gets the :class:`Attempt` and
starts the attempt's runs with :meth:`Attempt.start`, with whatever agent, history and checks
it needs; each such run is one of the task's (tagged with the task's tags, its ``task_id``
and its ``attempt``, under the task's one trace), its record kept in the task log, its events
in the task's trace. The job returns how the task ended (or lets its last run say).

An attempt of a job starts where the task began: one whose worker died is run again from
there (the dead attempt's messages go, its runs stay on record, marked lost), never resumed
half way, and a failed one is not retried (the job says what a failure means).
``agentnb.evals`` runs an evaluation's runs on a runtime this way (``an.evaluate(...,
runtime=rt)``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigurationError, RunStateError
from .attempt import close_lost, status_of
from .tasks import FINAL, Status

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime import Run
    from ..session import Session
    from .attempt import Sink
    from .tasks import TaskState

__all__ = ["JOB", "Attempt", "Job", "attempt_job"]

#: The tag naming the job that runs a task.
JOB = "job"


class Job(Protocol):
    """Runs one attempt of a task tagged ``job=<name>`` (``rt.serve(name, job)``): starts
    its runs with :meth:`Attempt.start`, and returns how the task ended (``"done"``,
    ``"error"`` or ``"cancelled"``), or None to let the last run it started say (as a task's
    own run does: ``error`` and ``cancelled`` by its stop reason, else ``done``)."""

    def __call__(self, attempt: Attempt) -> Awaitable[Status | None]: ...


@dataclass(eq=False)
class Attempt:
    """One attempt of a job's task, as its job sees it: the task's ``tags``, ``text`` and
    ``session`` (as it was when the task began), and :meth:`start`."""

    task_id: str
    number: int
    text: str
    tags: Mapping[str, str]
    session: Session
    _task: TaskState = field(repr=False)
    _sinks: list[Sink] = field(repr=False)
    _started: Callable[[Run], Any] | None = field(default=None, repr=False)
    #: The runs this attempt started, in order.
    runs: list[Run] = field(default_factory=list)

    @property
    def cancelled(self) -> bool:
        """The task was cancelled: start no more runs."""
        return self._task.cancel_requested

    def start(
        self, agent: Agent, input: Any = None, *, tags: Mapping[str, str] | None = None
    ) -> Run:
        """A run of this attempt on its session (not started: ``await run.finish()``): the
        task's, tagged with the task's tags, ``tags``, its ``task_id`` and ``attempt``, under
        the task's trace; its record joins the task's."""
        task = self._task
        if task.cancel_requested:
            raise RunStateError(f"task {task.id} was cancelled: its job starts no more runs")
        extra = dict(tags or {})
        clash = sorted(set(extra) & {"task_id", "attempt", JOB})
        if clash:
            raise ConfigurationError(f"tags {clash} are the service's own; a run may not set them")
        run = agent.start(
            input,
            session=self.session,
            task_id=task.id,
            trace_id=task.trace_id or None,
            tags={**task.tags, **extra, "task_id": task.id, "attempt": str(self.number)},
        )
        run.state.sinks.extend(self._sinks)
        task.runs.append(run.record)
        task.run = run
        self.runs.append(run)
        if self._started is not None:
            self._started(run)
        return run


async def attempt_job(
    job: Job,
    task: TaskState,
    session: Session,
    sinks: list[Sink],
    max_lost: int,
    started: Callable[[Run], Any] | None = None,
) -> Status:
    """One attempt of a job's task (every backend's): the session back to where the task
    began, the job run, its runs on record; how the task ended. Raises what the job raised
    (:class:`~agentnb.service.attempt.Abandoned` after ``max_lost`` lost attempts)."""
    close_lost(task, max_lost)
    start = task.start_len or 0
    if len(session) > start:  # a lost attempt's messages: this one starts over
        session.truncate(start)
    attempt = Attempt(
        task.id, task.attempt + 1, task.text, dict(task.tags), session, task, sinks, started
    )
    status = await job(attempt)
    if status is not None:
        if status not in FINAL:
            raise ConfigurationError(
                f"a job ends its task done, error or cancelled, not {status!r}"
            )
        return status
    last = attempt.runs[-1].result if attempt.runs else None
    if last is None:
        return "cancelled" if attempt.cancelled else "done"
    found = status_of(last)
    return "cancelled" if found == "awaiting_approval" else found  # (a job's runs ask no one)
