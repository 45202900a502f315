"""Tasks that wait for a person, in process: parked off the workers until a yes, a no or the
request's expiry.

A task whose run stopped ``awaiting_approval`` leaves its worker free (it counts in no
``max_concurrency`` slot) but keeps its session: the session's later tasks wait behind it,
as its conversation ends in the open call. ``rt.approve``/``rt.deny`` wake it once every
waiting call of its round is answered, and so does the expiry of the last request (the run
then reads ``denied``, expired): it goes back to the front of its session's queue and its next
attempt resumes the open round. With a persistent store the park outlives the runtime: a
closed runtime leaves the task awaiting, and ``recover()`` in the next process parks it again.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .inprocess import InProcess
    from .tasks import TaskState

__all__ = ["Parking"]


class Parking:
    def __init__(self, backend: InProcess) -> None:
        self.backend = backend
        self.tasks: dict[str, TaskState] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._poll: asyncio.Task[None] | None = None

    def park(self, task: TaskState) -> None:
        """Off the workers, session held; woken by a decision or at the earliest expiry."""
        backend = self.backend
        task.status = "awaiting_approval"
        self.tasks[task.id] = task
        backend.queue.busy.add(task.session_id)  # its session stays its
        expiries = [p.expires for p in backend.rt.log.approvals.pending(task.id) if p.expires]
        loop = asyncio.get_running_loop()
        if expiries:
            delay = max(0.0, min(expiries) - time.time())
            self._timers[task.id] = loop.call_later(delay, self._expired, task.id)
        if backend.rt.persistent and self._poll is None:  # decided by another process, too
            self._poll = loop.create_task(self._decided_elsewhere())
        backend.rt.changed(task)

    async def _decided_elsewhere(self, every: float = 1.0) -> None:
        while self.tasks:
            await asyncio.sleep(every)
            book = self.backend.rt.log.approvals
            for task_id in [t for t in self.tasks if not book.pending(t)]:
                self.wake(task_id)
        self._poll = None

    def of(self, session_id: str) -> TaskState | None:
        """The session's task parked here, if any."""
        return next((t for t in self.tasks.values() if t.session_id == session_id), None)

    def _expired(self, task_id: str) -> None:
        self._timers.pop(task_id, None)
        self.wake(task_id)

    def wake(self, task_id: str) -> bool:
        """Back to the front of its session's queue (its next attempt resumes the round)."""
        task = self.tasks.pop(task_id, None)
        if task is None:
            return False
        timer = self._timers.pop(task_id, None)
        if timer is not None:
            timer.cancel()
        task.status = "pending"
        queue = self.backend.queue
        queue.busy.discard(task.session_id)
        self.backend.put(task, first=True)
        self.backend.rt.changed(task)
        return True

    def leave(self, task_id: str) -> TaskState | None:
        """Take a task out (it is cancelled): its open calls are answered, its session free."""
        task = self.tasks.pop(task_id, None)
        timer = self._timers.pop(task_id, None)
        if timer is not None:
            timer.cancel()
        if task is not None:
            session = self.backend.rt.session(task.session_id)
            session.repair("cancelled: the task was cancelled while this call awaited approval")
            self.backend.queue.release(task.session_id)
        return task

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._poll is not None:
            self._poll.cancel()
