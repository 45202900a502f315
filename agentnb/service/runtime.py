"""Runtime: the agent as a service — submit, status, wait, get_trace, cancel (002 §3.1-3.2).

``rt = an.Runtime(agent)`` runs tasks in this process's event loop, with no server (the
default backend, :class:`~agentnb.service.inprocess.InProcess`); ``backend=DBOS(url)`` runs
them durably on DBOS, in this process (SQLite) or in worker processes (Postgres:
``python -m agentnb worker``). The API is the same::

    task_id = await rt.submit("user-42", "周五上海到北京…")   # QueueFull, or waits, by policy
    rt.status(task_id)            # pending | running | paused | done | error | cancelled
    info = await rt.wait(task_id)
    rt.get_trace(task_id)         # the task's Trace: every attempt, retrievable by id later
    rt.cancel(task_id); rt.list(status="running"); rt.session("user-42")

Every event of a task carries ``session_id``, ``task_id``, ``run_id`` and ``trace_id`` (one
trace per task, one run per attempt), and so does every log line of the service.

Jobs: ``submit(..., tags={...})`` labels a task (and every run it makes); ``list(tags=...)``
finds the tasks so labelled, ``gather(ids)`` waits for a set of them; a task tagged
``job=<name>`` is run by the :class:`~agentnb.service.jobs.Job` served under that name
(``rt.serve(name, job)``). An evaluation on a runtime is a batch of such tasks
(:mod:`agentnb.evals.sweep`).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import display
from ..errors import ApprovalError, ConfigurationError, RunStateError, SessionNotFound
from ..events import (
    ContextRestored,
    Event,
    ModelResponded,
    RunStarted,
    ToolFinished,
    ToolsExecuted,
)
from ..runtime import RunResult
from ..session import MemoryStore, Session, Store, checked_tags, validate_session_id
from ..storage import SQLStore, Trace
from .approvals import Pending
from .backend import Backend
from .inprocess import InProcess
from .jobs import JOB, Job
from .journal import task_log_for
from .policies import MULTITASK, ON_FULL, Multitask, OnFull, Retry, check_choice
from .tasks import FINAL, STATUSES, Status, TaskInfo, TaskNotFound, TaskState, new_task_id

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime import Verdict

__all__ = ["Backend", "Runtime"]

logger = logging.getLogger("agentnb.service")
_PROGRESS = (RunStarted, ModelResponded, ToolFinished)

Listener = Callable[[TaskState], Any]


class Runtime:
    """An agent behind a bounded task queue.

    Args:
        agent: the :class:`~agentnb.Agent` every task runs.
        store: where sessions (and the task log) live; a shared in-memory store by default.
        max_concurrency: tasks running at once, at most.
        max_queue: tasks accepted but not started, at most.
        on_full: ``"reject"`` (``submit`` raises :class:`QueueFull`) or ``"wait"``.
        multitask: what a message for a busy session does (see :mod:`.policies`); ``submit``
            may override it per message.
        retry: a :class:`Retry`, or the number of attempts (model/transport failures only).
        backend: :class:`InProcess` by default; ``agentnb.service.DBOS(...)`` for durable runs.
        approval_timeout: seconds a call waits for ``approve``/``deny`` before it is denied
            as expired (None: it waits until answered).
        keep_finished: finished tasks kept in memory (the newest); older ones stay answerable
            from a SQLite or Postgres store, and are forgotten with an in-memory one.
        max_lost: a task whose workers die under it this many times (one that kills its
            process) ends in error instead of being taken over again.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        store: Store | None = None,
        max_concurrency: int = 8,
        max_queue: int = 1000,
        on_full: OnFull = "reject",
        multitask: Multitask = "enqueue",
        retry: Retry | int | None = None,
        backend: Backend | None = None,
        approval_timeout: float | None = 3600.0,
        keep_finished: int = 10_000,
        max_lost: int = 5,
    ) -> None:
        if agent.model is None:
            raise ConfigurationError(f"agent {agent.name!r} has no model; a Runtime needs one")
        sizes = ("max_concurrency", max_concurrency), ("max_queue", max_queue)
        for name, value in (*sizes, ("keep_finished", keep_finished), ("max_lost", max_lost)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigurationError(f"{name} must be a positive int, got {value!r}")
        self.agent = agent
        self.store: Store = store if store is not None else MemoryStore()
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        self.on_full: OnFull = check_choice("on_full", on_full, ON_FULL)  # type: ignore[assignment]
        self.multitask = check_choice("multitask", multitask, MULTITASK)
        self.retry = retry if isinstance(retry, Retry) else Retry(attempts=retry or 3)
        if approval_timeout is not None and not approval_timeout > 0:
            raise ConfigurationError(f"approval_timeout must be positive, got {approval_timeout!r}")
        self.approval_timeout = approval_timeout
        self.keep_finished, self.max_lost = keep_finished, max_lost
        self.log = task_log_for(self.store)
        #: True when tasks and traces outlive this process (the store is on disk or a server).
        self.persistent = self.log.persistent
        self.backend: Backend = backend if backend is not None else InProcess()
        self._sessions: dict[str, Session] = {}
        self._listeners: list[Listener] = []
        #: The jobs this process runs, by name (see :meth:`serve`).
        self.jobs: dict[str, Job] = {}
        self.backend.bind(self)

    # -- submitting ------------------------------------------------------------------------
    async def submit(
        self,
        session_id: str,
        text: str,
        *,
        multitask: Multitask | None = None,
        tags: dict[str, str] | None = None,
    ) -> str:
        """Queue ``text`` for ``session_id``; returns the task id.

        A full queue raises :class:`QueueFull` (``on_full="reject"``) or waits for room; a busy
        session follows ``multitask``. ``tags`` label the task and every run it makes (each
        run also carries ``task_id`` and ``attempt``); ``job=<name>`` among them has the job
        served under that name run it (:meth:`serve`).
        """
        validate_session_id(session_id)
        if not isinstance(text, str):
            raise ConfigurationError(f"a task's text must be a str, got {type(text).__name__}")
        policy = check_choice("multitask", multitask or self.multitask, MULTITASK)
        labels = checked_tags(tags)
        own = sorted({"task_id", "attempt"} & set(labels))
        if own:
            raise ConfigurationError(f"tags {own} are the service's own (each run gets them)")
        task = TaskState(new_task_id(), session_id, text, tags=labels)
        await self.backend.submit(task, policy)
        return task.id

    def serve(self, name: str, job: Job) -> None:
        """Run the tasks tagged ``job=name`` with ``job`` in this process (see
        :mod:`agentnb.service.jobs`); a worker process serves the jobs its tasks name."""
        if not isinstance(name, str) or not name or not callable(job):
            raise ConfigurationError(f"serve(name, job) takes a name and a callable, not {job!r}")
        self.jobs[name] = job

    def job_of(self, task: TaskState) -> Job | None:
        """The job that runs ``task``, or None for the runtime's agent on its text."""
        name = task.tags.get(JOB)
        if name is None:
            return None
        job = self.jobs.get(name)
        if job is None:
            raise ConfigurationError(
                f"task {task.id} is a job {name!r}, and no job of that name is served here "
                "(rt.serve(name, job) in the process that runs it)"
            )
        return job

    # -- asking ------------------------------------------------------------------------------
    def status(self, task_id: str) -> TaskInfo:
        """Where the task is (``.status``, ``.stop_reason``, ``.attempt``, ``.iteration``...)."""
        return self.backend.task(task_id).info()

    async def wait(self, task_id: str, timeout: float | None = None) -> TaskInfo:
        """Wait until the task is done, error or cancelled; returns its final status."""
        waiting = self.backend.wait(task_id)
        return await (waiting if timeout is None else asyncio.wait_for(waiting, timeout))

    async def join(self, timeout: float | None = None) -> builtins.list[TaskInfo]:
        """Wait for every task submitted so far (to this runtime); their final statuses (of
        the ones it keeps: see ``keep_finished``)."""
        infos = []
        for task_id in self.backend.submitted():
            try:
                infos.append(await self.wait(task_id, timeout))
            except TaskNotFound:  # it ended and was let go meanwhile
                continue
        return infos

    def result(self, task_id: str) -> RunResult:
        """The :class:`~agentnb.RunResult` of the task's last attempt, once the task is over:
        its record, its messages, its events (the same on every backend)."""
        task = self.backend.task(task_id)
        if task.status not in FINAL:
            raise RunStateError(f"task {task_id} is {task.status}; `await rt.wait(id)` first")
        if not task.runs:
            raise RunStateError(
                f"task {task_id} ended {task.status} before any run "
                f"({task.error or 'it never started'}): it has no result"
            )
        record = task.runs[-1]
        session = self.session(task.session_id)
        messages = session.transcript.messages
        mine = (
            messages[record.start : record.end]
            if record.start is not None and record.end >= 0
            else []
        )
        events = [e for e in self.get_trace(task_id) if e.run_id == record.run_id]
        return RunResult(record, session, events, list(mine))

    def get_trace(self, task_id: str) -> Trace:
        """The task's events, every attempt in order (from the store after a restart)."""
        task = self.backend.task(task_id)
        run = task.run
        if run is None:
            return Trace(self.log.trace(task_id))
        kept = [e for e in self.log.trace(task_id) if e.run_id != run.id]
        return Trace([*kept, *run.events])  # the attempt running now, as far as it got

    async def gather(
        self, task_ids: builtins.list[str], timeout: float | None = None
    ) -> builtins.list[TaskInfo]:
        """Wait for every task of ``task_ids`` to end; their final statuses, in that order."""
        waits = [self.backend.wait(task_id) for task_id in task_ids]
        return builtins.list(await asyncio.wait_for(asyncio.gather(*waits), timeout))

    def list(
        self,
        status: str | None = None,
        session_id: str | None = None,
        *,
        tags: dict[str, str] | None = None,
    ) -> builtins.list[TaskInfo]:
        """Tasks in submission order, filtered by status, session and/or ``tags`` (a task
        matches when it was submitted with each of them)."""
        wanted = checked_tags(tags).items()
        infos = [t.info() for t in self.backend.tasks(tags=dict(wanted) or None)]
        return [
            i
            for i in infos
            if (status is None or i.status == status)
            and (session_id is None or i.session_id == session_id)
            and wanted <= i.tags.items()
        ]

    def counts(self) -> dict[str, int]:
        """Tasks per status, and ``queued``: the queue's depth."""
        out: dict[str, int] = dict.fromkeys(STATUSES, 0)
        for task in self.backend.tasks():
            out[task.status] += 1
        out["queued"] = self.backend.depth()
        return out

    def session(self, session_id: str) -> Session:
        """The session as this runtime keeps it: loaded from the store on first use, with the
        records of the runs its tasks made (``session.runs``)."""
        session = self._sessions.get(session_id)
        if (
            session is not None
            and self.backend.durable
            and session.lock.hold is None
            and isinstance(self.store, SQLStore)
            and self.store.version(session_id) != session.version  # a worker elsewhere wrote
        ):
            session = None
        if session is None:
            store = self.store
            if isinstance(store, MemoryStore) and session_id not in store:  # (no exception)
                session = Session(id=session_id, store=store)
            else:
                try:
                    session = Session.open(store, session_id)
                except SessionNotFound:
                    session = Session(id=session_id, store=store)
            tasks = [t for t in self.log.tasks(session_id) if t.runs]  # (a new one has none)
            for task in tasks:
                session.runs.extend(r for r in task.runs if r.start is not None)
            for task in reversed(tasks):  # the newest kept events: number after them
                if events := self.log.trace(task.id):
                    session.bus.continue_after(max(e.seq for e in events))
                    break
            self._sessions[session_id] = session
        return session

    def forget(self, session_id: str) -> None:
        """Drop the cached session (the next use reloads it from the store)."""
        self._sessions.pop(session_id, None)

    # -- steering ----------------------------------------------------------------------------
    async def recover(self) -> builtins.list[str]:
        """Take over the tasks a crashed process left unfinished (in-process backend on a
        persistent store; DBOS recovers its own). They resume from their last committed
        round; a side-effecting call that was in flight is answered ``uncertain``."""
        return await self.backend.recover()

    def cancel(self, task_id: str) -> bool:
        """Cancel a pending or running task (open calls answered ``cancelled``); False when
        it was already over."""
        return self.backend.cancel(task_id)

    async def run_step(self, task_id: str) -> Event:
        """Drive a task yourself, one stage per call (as ``run.step()``); the workers leave it."""
        return await self.backend.run_step(task_id)

    # -- approvals ---------------------------------------------------------------------------
    def approvals(self, task_id: str | None = None) -> builtins.list[Pending]:
        """The calls waiting for a yes or no (of one task), oldest first; none of a task that
        has ended (cancelled, or done after its request expired): they can never run."""
        return [p for p in self.log.approvals.pending(task_id) if not self._ended(p.task_id)]

    def _ended(self, task_id: str) -> bool:
        try:
            return self.backend.task(task_id).status in FINAL
        except TaskNotFound:
            return True

    async def approve(self, task_id: str, call_id: str, *, digest: str) -> None:
        """Let the waiting call run (``digest``: the one its ``ApprovalRequested`` showed; an
        approval of other arguments is refused). The task resumes; the call runs once."""
        await self._decide(task_id, call_id, digest, "approved", "")

    async def deny(
        self,
        task_id: str,
        call_id: str,
        reason: str = "a person said no",
        *,
        digest: str | None = None,
    ) -> None:
        """Refuse the waiting call: the model reads a ``denied`` result with ``reason``."""
        await self._decide(task_id, call_id, digest, "denied", reason)

    async def _decide(
        self, task_id: str, call_id: str, digest: str | None, verdict: Verdict, reason: str
    ) -> None:
        task = self.backend.task(task_id)  # TaskNotFound first
        asked = any(p.call_id == call_id for p in self.log.approvals.pending(task_id))
        if asked and task.status in FINAL:  # a request left over by a task that ended
            raise ApprovalError(
                f"task {task_id} is {task.status}: its calls will not run, so there is nothing "
                f"to {'approve' if verdict == 'approved' else 'deny'}"
            )
        await asyncio.to_thread(
            self.log.approvals.decide, task_id, call_id, digest, verdict, reason
        )
        logger.info("task %s: call %s %s", task_id, call_id, verdict)
        if not self.log.approvals.pending(task_id):  # every call of its round answered
            await self.backend.wake(task_id)

    # -- the one way a task ends -------------------------------------------------------------
    def finish(self, task: TaskState, status: Status, error: str | None = None) -> None:
        """End ``task`` with ``status`` (its runs' records say the rest; ``error`` says why
        when none does): recorded in the log, its waiters woken, its watchers told. (A task
        that ended already stays as it ended.)"""
        if task.status in FINAL:
            return
        task.status = status
        task.error = error
        task.finished = time.time()
        task.run = None
        self.log.end_task(task.id)
        self.changed(task)
        if task.future is not None and not task.future.done():
            task.future.set_result(task.info())

    # -- watching ----------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(task)`` whenever a task changes (status, attempt, progress)."""
        if not self._listeners and not self.persistent:  # the runs under way report now
            for task in self.backend.tasks():
                run = task.run
                if run is not None and not run.done:
                    run.state.sinks.append(self.progress(task))
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def changed(self, task: TaskState, *, write: bool = True) -> None:
        """A task changed: written to the log (``write``), its watchers told. O(1): nothing
        is computed for them (a watcher reads ``status``/``info()`` when it shows the task);
        the log line of its start and of its end is written by :meth:`started` and
        :meth:`finish`."""
        if write:
            self.log.put(task)
        if task.status in FINAL:
            self._log_line(task)
        if self._listeners:
            for listener in builtins.list(self._listeners):  # one may unsubscribe meanwhile
                listener(task)

    def started(self, task: TaskState) -> None:
        """An attempt of ``task`` has its run: on record (the log line names its ids)."""
        self.changed(task)
        self._log_line(task)

    def _log_line(self, task: TaskState) -> None:
        if not logger.isEnabledFor(logging.INFO):
            return
        run_id = task.runs[-1].run_id if task.runs else None
        ids = {"session_id": task.session_id, "task_id": task.id, "run_id": run_id}
        stop = task.info().stop_reason if task.status in FINAL else None
        reason = f" stop_reason={stop}" if stop else ""
        line = f"task {task.id} {task.status} (session={task.session_id} run={run_id} "
        logger.info(
            line + f"trace={task.trace_id}{reason})", extra=ids | {"trace_id": task.trace_id}
        )

    def sinks(self, task: TaskState) -> builtins.list[Callable[[Event], None]]:
        """The sinks of ``task``'s runs: its :meth:`progress`, when a log keeps traces as they
        go or somebody watches (else none: a run pays nothing per event)."""
        return [self.progress(task)] if self.persistent or self._listeners else []

    def progress(self, task: TaskState) -> Callable[[Event], None]:
        """A run sink telling the task's watchers of its progress (a model reply, a tool);
        in a persistent log, the attempt's trace is kept at its start and at each round's end
        too (an attempt whose worker dies is listed, with its events up to there)."""
        listeners, persistent = self._listeners, self.persistent

        def sink(event: Event) -> None:
            kind = type(event)
            if persistent and (kind is ToolsExecuted or kind is ContextRestored):
                run = task.run  # kept at its start and at each round's end: none goes unlisted
                if run is not None:
                    self.log.put_trace(task.id, run.id, list(run.events))
            if listeners and kind in _PROGRESS:
                for listener in listeners:
                    listener(task)

        return sink

    def missing(self, task_id: str) -> TaskNotFound:
        forgotten = (
            ""
            if self.persistent
            else (
                f" (an in-memory runtime keeps its {self.keep_finished} newest finished tasks: "
                "keep_finished=)"
            )
        )
        return TaskNotFound(f"no task {task_id!r} in this runtime or its store{forgotten}", task_id)

    def view(self, **options: Any) -> Any:
        """The live :class:`~agentnb.widgets.QueueView` of this runtime (needs ipywidgets)."""
        return display.view(self, **options)

    # -- closing -----------------------------------------------------------------------------
    async def close(self) -> None:
        """Stop the workers (tasks still running are cancelled)."""
        await self.backend.close()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        counts = self.counts()
        busy = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        return (
            f"<Runtime {self.agent.name!r} on {self.backend.name}, "
            f"max_concurrency={self.max_concurrency}: {busy or 'no tasks'}>"
        )
