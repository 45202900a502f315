"""The in-process backend: a bounded queue and ``max_concurrency`` workers on this event loop.

Works in a notebook with no server (002 §3.1: one asyncio loop managing many tasks). Each
session has its own FIFO of tasks, and at most one of them runs at a time; the workers take
sessions in the order they became ready, so a busy session never blocks the others. The
queue's depth (tasks accepted, not yet started) is bounded by ``max_queue``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

from ..errors import RunStateError, SessionBusy
from ..events import Event
from ..storage.trace import Trace
from . import stepping
from .attempt import Outcome, run_attempt
from .queue import SessionQueues
from .tasks import FINAL, Task, TaskInfo

if TYPE_CHECKING:
    from ..runtime.run import Run
    from .runtime import Runtime

__all__ = ["InProcess"]


class InProcess:
    """Tasks run as asyncio tasks of this process (the default backend)."""

    name = "inprocess"
    durable = False

    def bind(self, rt: Runtime) -> None:
        self.rt = rt
        self.tasks: dict[str, Task] = {}
        self.current: dict[str, Task] = {}  # session id -> its task running or paused
        self.queue = SessionQueues(rt.max_queue)
        self._workers: list[asyncio.Task[None]] = []
        self.running = 0
        self.peak = 0  # most tasks running at once, ever

    # -- the queue ---------------------------------------------------------------------------
    @property
    def depth(self) -> int:
        """Tasks accepted and not started."""
        return self.queue.depth

    def _put(self, task: Task, *, first: bool = False) -> None:
        if not self._workers:
            self._workers = [
                asyncio.ensure_future(self._work()) for _ in range(self.rt.max_concurrency)
            ]
        self.queue.put(task, first=first)

    def active(self, session_id: str) -> Task | None:
        """The session's task that is running or paused, if any."""
        return self.current.get(session_id)

    async def submit(self, task: Task, multitask: str) -> None:
        rt, sid = self.rt, task.session_id
        running = self.active(sid)
        queued = self.queue.by_session.get(sid)
        if multitask == "reject" and (running is not None or queued):
            holder = running.id if running is not None else queued[0].id  # type: ignore[index]
            raise SessionBusy(
                f"session {sid!r} already has task {holder}; multitask='reject' refuses a "
                "second message while it is busy (use 'enqueue', 'interrupt' or 'rollback')",
                sid,
                holder,
            )
        await self.queue.room(rt.on_full)
        running = self.active(sid)  # the wait may have changed who runs
        self.tasks[task.id] = task
        rt.log.put(task.info())
        if multitask in ("interrupt", "rollback") and running is not None:
            running.ended_by = multitask
            self._put(task, first=True)
            self.cancel(running.id)
        else:
            self._put(task)
        rt.changed(task)

    async def _work(self) -> None:
        while True:
            task = await self.queue.next()
            try:
                await self._execute(task)
            except Exception as exc:  # a bug of ours must not kill a worker
                self._finish(task, Outcome("error", "error", error=f"{type(exc).__name__}: {exc}"))
            finally:
                self.queue.release(task.session_id)

    # -- running a task ----------------------------------------------------------------------
    def _begin(self, task: Task) -> None:
        task.status = "running"
        task.started = time.time()
        self.current[task.session_id] = task
        self.running += 1
        self.peak = max(self.peak, self.running)
        session = self.rt.session(task.session_id)
        task.start_len = self.rt.log.start_len(task.id, len(session))
        self.rt.log.put(task.info())  # a restarted process sees it was running
        self.rt.changed(task)

    async def _execute(self, task: Task) -> None:
        rt = self.rt
        self._begin(task)
        session = rt.session(task.session_id)
        assert task.start_len is not None
        while True:
            task.attempt += 1
            outcome = await run_attempt(
                rt.agent,
                session,
                task_id=task.id,
                trace_id=task.trace_id,
                text=task.text,
                start_len=task.start_len,
                log=rt.log,
                sinks=[rt.progress(task)],
                on_run=lambda run: self._started(task, run),
            )
            task.run = None
            self._attempted(task, outcome)
            if outcome.retryable and task.attempt < rt.retry.attempts and not task.cancel_requested:
                await asyncio.sleep(rt.retry.delay(task.attempt))
                if not task.cancel_requested:
                    continue
                outcome = Outcome("cancelled", "cancelled", error=outcome.error)
            self._finish(task, outcome)
            return

    @staticmethod
    def _started(task: Task, run: Run) -> None:
        task.run = run
        if task.cancel_requested:
            run.cancel()

    def _attempted(self, task: Task, outcome: Outcome) -> None:
        task.events.extend(outcome.events)
        task.attempts.append(outcome.record(task.attempt))
        task.iteration = outcome.iteration
        if self.rt.persistent:
            self.rt.log.put_trace(task.id, task.attempt, Trace(outcome.events).to_jsonl())
            self.rt.log.put(task.info())
        self.rt.changed(task)

    def _finish(self, task: Task, outcome: Outcome) -> None:
        if task.status in FINAL:
            return
        rt = self.rt
        if task.status == "running":
            self.running -= 1
        if self.current.get(task.session_id) is task:
            del self.current[task.session_id]
        if task.ended_by == "rollback" and task.start_len is not None:
            session = rt.session(task.session_id)
            if len(session) > task.start_len:
                session.truncate(task.start_len)  # its messages go; an edit commits at once
                session.commit()
        task.status = outcome.status  # type: ignore[assignment]
        task.stop_reason = outcome.stop_reason
        task.output = outcome.output
        task.error = outcome.error
        task.result = outcome.result
        task.finished = time.time()
        rt.log.end_task(task.id)
        info = task.info()
        rt.log.put(info)
        if task.future is not None and not task.future.done():
            task.future.set_result(info)
        rt.changed(task)

    # -- asking and steering -----------------------------------------------------------------
    def get(self, task_id: str) -> Task:
        try:
            return self.tasks[task_id]
        except KeyError:
            raise self.rt.missing(task_id) from None

    def status(self, task_id: str) -> TaskInfo:
        task = self.tasks.get(task_id)
        if task is not None:
            return task.info()
        info = self.rt.log.get(task_id)  # a task of an earlier process, kept by the store
        if info is None:
            raise self.rt.missing(task_id)
        return info

    def infos(self) -> list[TaskInfo]:
        mine = [t.info() for t in self.tasks.values()]
        if not self.rt.persistent:
            return mine
        return mine + [i for i in self.rt.log.infos() if i.id not in self.tasks]

    async def recover(self) -> list[str]:
        """Queue again the unfinished tasks an earlier process left in the store's log."""
        left = sorted(
            (i for i in self.rt.log.infos() if not i.done and i.id not in self.tasks),
            key=lambda i: i.id,  # ids sort in submission order
        )
        for info in left:
            task = Task(info.id, info.session_id, info.text, trace_id=info.trace_id,
                        created=info.created, attempt=info.attempt,
                        attempts=list(info.attempts))  # fmt: skip
            self.tasks[task.id] = task
            self._put(task)
        return [i.id for i in left]

    async def wait(self, task_id: str) -> TaskInfo:
        if task_id not in self.tasks:
            info = self.status(task_id)
            if info.done:
                return info
            raise RunStateError(
                f"task {task_id} was left unfinished by another process; "
                "`await rt.recover()` takes it over"
            )
        task = self.get(task_id)
        if task.status in FINAL:
            return task.info()
        if task.future is None:
            task.future = asyncio.get_running_loop().create_future()
        return await asyncio.shield(task.future)

    def cancel(self, task_id: str) -> bool:
        task = self.get(task_id)
        if task.status in FINAL:
            return False
        task.cancel_requested = True
        if task.status == "pending":
            if self.queue.holds(task):
                self.queue.take(task)
            self._finish(task, Outcome("cancelled", "cancelled", error=None))
        elif task.run is not None:
            task.run.cancel()  # a paused (stepped) run ends now; a running one at once
            if task.stepped and task.run.done:
                stepping.end(self, task)
        return True

    async def run_step(self, task_id: str) -> Event:
        return await stepping.run_step(self, self.get(task_id))

    async def close(self) -> None:
        for worker in self._workers:
            worker.cancel()
        for worker in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        self._workers = []
        for task in list(self.tasks.values()):  # what the closing cut short ends, on record
            if task.status not in FINAL:
                if self.queue.holds(task):
                    self.queue.take(task)
                self._finish(task, Outcome("cancelled", "cancelled", error="the runtime closed"))
