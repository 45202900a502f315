"""The in-process backend: a bounded queue and ``max_concurrency`` workers on this event loop.

Works in a notebook with no server (002 §3.1: one asyncio loop managing many tasks). Each
session has its own FIFO of tasks, and at most one of them runs at a time; the workers take
sessions in the order they became ready, so a busy session never blocks the others. The
queue's depth (tasks accepted, not yet started) is bounded by ``max_queue``.

A task's life here, in public steps the workers and :mod:`.stepping` share: ``begin`` (its
session taken), ``start`` (an attempt's run exists), ``attempted`` (that run ended, its trace
kept), ``end`` (the task over, its session free, ``Runtime.finish`` records it).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import TYPE_CHECKING

from ..errors import RunStateError, SessionBusy
from ..events import Event
from ..runtime import Run
from . import stepping
from .attempt import finish_attempt, start_attempt, status_of
from .jobs import Job, attempt_job
from .journal import MemoryTaskLog
from .lease import Membership, join_in_loop, take_over
from .parking import Parking
from .policies import Retry, attempts
from .queue import SessionQueues
from .sqllog import SQLTaskLog
from .tasks import FINAL, Status, TaskInfo, TaskState

if TYPE_CHECKING:
    from ..runtime import RunResult
    from ..session import Session
    from .runtime import Runtime

__all__ = ["InProcess"]


class InProcess:
    """Tasks run as asyncio tasks of this process (the default backend)."""

    name = "inprocess"
    durable = False

    def bind(self, rt: Runtime) -> None:
        self.rt = rt
        self.mine: dict[str, TaskState] = {}  # the tasks submitted or recovered here
        self.current: dict[str, TaskState] = {}  # session id -> its task running or paused
        self.queue = SessionQueues(rt.max_queue)
        self.finished: deque[str] = deque()  # the finished tasks kept here, oldest first
        self._workers: list[asyncio.Task[None]] = []
        self._wake: dict[str, asyncio.Event] = {}  # a task waiting to retry, woken by cancel
        self.running, self.peak = 0, 0  # tasks running now; most at once, ever
        self.member: Membership | None = None  #: this runtime among its store's workers
        self.lost: str | None = None  #: why this runtime stopped running tasks
        self.parking = Parking(self)  #: the tasks waiting for a person

    def _join(self) -> None:
        """Run tasks as a worker of the store: a unique id, a heartbeat, a lease."""
        log = self.rt.log
        if self.lost is not None:
            raise RunStateError(f"this runtime stopped running tasks: {self.lost}")
        if self.member is None and isinstance(log, SQLTaskLog):
            self.member = join_in_loop(log, self, InProcess._lose)

    def _lose(self, why: str) -> None:
        """Another worker took this one's tasks (its lease lapsed): stop them, take no more."""
        self.lost = why
        for task in list(self.mine.values()):
            if task.run is not None:
                task.run.cancel()

    # -- the queue ---------------------------------------------------------------------------
    def depth(self) -> int:
        return self.queue.depth

    def put(self, task: TaskState, *, first: bool = False) -> None:
        if not self._workers:
            self._workers = [
                asyncio.ensure_future(self._work()) for _ in range(self.rt.max_concurrency)
            ]
        self.queue.put(task, first=first)

    async def submit(self, task: TaskState, multitask: str) -> None:
        rt, sid = self.rt, task.session_id
        if multitask == "reject":
            self._refuse_if_busy(sid)
        if self.queue.full():  # (room now: no wait to build)
            await self.queue.room(rt.on_full)
        if multitask == "reject":  # another message may have come in while this one waited
            self._refuse_if_busy(sid)
        self._join()
        running = self.current.get(sid)  # the wait may have changed who runs
        task.owner = self.member.id if self.member is not None else None
        self.mine[task.id] = task
        rt.changed(task)
        if multitask in ("interrupt", "rollback") and running is not None:
            running.ended_by = multitask
            self.put(task, first=True)
            self.cancel(running.id)
        else:
            self.put(task)

    def _refuse_if_busy(self, sid: str) -> None:
        queued = self.queue.by_session.get(sid) or ()
        holder = self.current.get(sid) or next(iter(queued), None) or self.parking.of(sid)
        if holder is not None:
            raise SessionBusy(
                f"session {sid!r} already has task {holder.id}; multitask='reject' refuses a "
                "second message while it is busy (use 'enqueue', 'interrupt' or 'rollback')",
                sid,
                holder.id,
            )

    async def _work(self) -> None:
        while True:
            task = await self.queue.next()
            parked = False
            try:
                parked = await self._execute(task)
            except Exception as exc:  # a fault of ours (or a job's) must not kill a worker
                status: Status = "cancelled" if task.cancel_requested else "error"
                self.end(task, status, f"{type(exc).__name__}: {exc}")
            finally:
                if not parked:  # a parked task keeps its session (see .parking)
                    self.queue.release(task.session_id)

    # -- a task's life -----------------------------------------------------------------------
    def begin(self, task: TaskState) -> Session:
        """The task runs now: it holds its session (fixing where its input goes)."""
        task.status = "running"
        task.started = task.started or time.time()
        self.current[task.session_id] = task
        self.running += 1
        self.peak = max(self.peak, self.running)
        session = self.rt.session(task.session_id)
        task.start_len = self.rt.log.start_len(task.id, len(session))
        self.rt.changed(task, write=False)  # written with its attempt's record (start)
        return session

    def start(self, task: TaskState, session: Session) -> Run | None:
        """The run of the task's next attempt (its record joins the task), or None when the
        task's answer is committed already (a crash came after it)."""
        rt = self.rt
        sinks = rt.sinks(task)
        run = start_attempt(
            rt.agent, session, rt.log, task, sinks, rt.approval_timeout, rt.max_lost
        )
        if not isinstance(run, Run):
            return None
        task.run = run
        self.rt.started(task)  # a restarted process sees it running, and this attempt
        if task.cancel_requested:
            run.cancel()
        return run

    def attempted(self, task: TaskState, *results: RunResult) -> None:
        """An attempt's runs ended: their events are kept, their records are final."""
        task.run = None
        for result in results:
            self.rt.log.put_trace(task.id, result.run_id, result.events)
        self.rt.changed(task)

    def end(self, task: TaskState, status: Status, error: str | None = None) -> None:
        """The task is over: its session is free (its messages gone if it was rolled back)."""
        if task.status in FINAL:
            return
        if task.status in ("running", "paused"):
            self.running -= 1
        if self.current.get(task.session_id) is task:
            del self.current[task.session_id]
        if task.ended_by == "rollback" and task.start_len is not None:
            session = self.rt.session(task.session_id)
            if len(session) > task.start_len:
                session.truncate(task.start_len)  # its messages go; an edit commits at once
        self._wake.pop(task.id, None)
        self.rt.finish(task, status, error)
        self.finished.append(task.id)
        while len(self.finished) > self.rt.keep_finished:  # bounded: see Runtime(keep_finished)
            old = self.finished.popleft()
            self.mine.pop(old, None)
            if isinstance(self.rt.log, MemoryTaskLog):  # a SQL log keeps it answerable
                self.rt.log.forget(old)

    async def _execute(self, task: TaskState) -> bool:
        """Run the task's attempts; True when it is parked, awaiting approval."""
        session = self.begin(task)
        job = self.rt.job_of(task)
        if job is not None:  # one attempt (see .jobs): the job says how it ended
            self.end(task, await self._job(job, task, session))
            return False

        async def attempt(_: int) -> RunResult | None:
            run = self.start(task, session)
            if run is None:
                return None
            try:
                return await finish_attempt(run)
            finally:  # also when the worker itself is cancelled (the runtime closes)
                if run.result is not None:
                    self.attempted(task, run.result)

        async def backoff(seconds: float) -> None:
            wake = self._wake.setdefault(task.id, asyncio.Event())  # a cancel wakes it at once
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), seconds)

        result = await attempt(1)  # the retries (most tasks need none) follow it
        if result is not None and Retry.retryable(result.error) and self.rt.retry.attempts > 1:
            result = await attempts(
                self.rt.retry,
                attempt,
                retry_on=lambda r: Retry.retryable(r.error),
                sleep=backoff,
                give_up=lambda: task.cancel_requested,
                first=result,
            )
        if result is None:  # the answer was there already, or a cancel came between attempts
            self.end(task, "cancelled" if task.cancel_requested else "done")
        elif (status := status_of(result)) == "awaiting_approval" and not task.cancel_requested:
            self.running -= 1
            self.current.pop(task.session_id, None)
            self.parking.park(task)
            return True
        else:
            self.end(task, "cancelled" if status == "awaiting_approval" else status)
        return False

    async def _job(self, job: Job, task: TaskState, session: Session) -> Status:
        """One attempt of a job's task (see :mod:`.jobs`): how it ended."""
        made: list[Run] = []

        def started(run: Run) -> None:
            made.append(run)
            self.rt.started(task)  # each run is on record before it does anything

        sinks = self.rt.sinks(task)
        try:
            return await attempt_job(job, task, session, sinks, self.rt.max_lost, started)
        finally:
            self.attempted(task, *(r.result for r in made if r.result is not None))

    # -- asking and steering -----------------------------------------------------------------
    def task(self, task_id: str) -> TaskState:
        task = self.mine.get(task_id) or self.rt.log.get(task_id)
        if task is None:
            raise self.rt.missing(task_id)
        return task

    def tasks(self, tags: dict[str, str] | None = None) -> list[TaskState]:
        if not self.rt.persistent:
            return list(self.mine.values())  # submitted here, in order (dicts keep it)
        stored = [t for t in self.rt.log.tasks(tags=tags) if t.id not in self.mine]
        return sorted([*self.mine.values(), *stored], key=lambda t: t.id)

    def submitted(self) -> list[str]:
        return list(self.mine)  # in submission order (dicts keep it)

    async def recover(self) -> list[str]:
        """Take over the unfinished tasks of workers that are gone, each claimed once (two
        processes recovering one store share them out; see :mod:`.lease`)."""
        self._join()
        if self.member is None or not isinstance(self.rt.log, SQLTaskLog):
            return []
        won = await asyncio.to_thread(take_over, self.member, self.rt.log, set(self.mine))
        for task in won:
            self.mine[task.id] = task
            if task.status == "awaiting_approval":  # it waits on, here (see .parking)
                self.parking.park(task)
                continue
            task.status = "pending"
            self.put(task)
        return [t.id for t in won]

    async def wake(self, task_id: str) -> None:
        self.parking.wake(task_id)

    async def wait(self, task_id: str) -> TaskInfo:
        task = self.task(task_id)
        if task.status in FINAL:
            return task.info()
        if task.id not in self.mine:
            raise RunStateError(
                f"task {task_id} was left unfinished by another process; "
                "`await rt.recover()` takes it over"
            )
        if task.future is None:
            task.future = asyncio.get_running_loop().create_future()
        return await asyncio.shield(task.future)

    def cancel(self, task_id: str) -> bool:
        task = self.task(task_id)
        if task.status in FINAL:
            return False
        task.cancel_requested = True
        if task.status == "awaiting_approval" and self.parking.leave(task_id) is not None:
            self.end(task, "cancelled")  # its open calls got their answer (see .parking)
        elif task.status == "pending":
            if self.queue.holds(task):
                self.queue.take(task)
            self.end(task, "cancelled")
        elif task.run is not None:
            task.run.cancel()  # a paused (stepped) run ends now; a running one at once
            if task.stepped and task.run.done:
                stepping.end(self, task)
        elif task.id in self._wake:
            self._wake[task.id].set()  # waiting to retry: it stops waiting
        return True

    async def run_step(self, task_id: str) -> Event:
        return await stepping.run_step(self, self.task(task_id))

    async def close(self) -> None:
        for worker in self._workers:
            worker.cancel()
        for worker in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        self._workers = []
        self.parking.close()
        for task in list(self.mine.values()):  # what the closing cut short ends, on record
            if task.status == "awaiting_approval" and self.rt.persistent:
                continue  # it waits on in the store: recover() in the next process parks it
            if task.status not in FINAL:
                if self.queue.holds(task):
                    self.queue.take(task)
                self.end(task, "cancelled", "the runtime closed")
        if self.member is not None:
            await asyncio.to_thread(self.member.leave)
            self.member = None
