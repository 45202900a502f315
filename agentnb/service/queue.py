"""The bounded queue: one FIFO of accepted tasks per session, and the sessions ready to run.

A session is *ready* when it has queued tasks and none running; workers take ready sessions
in the order they became ready, so one busy session never blocks the others and each
session's tasks run one at a time, in submission order. ``depth`` counts the tasks accepted
and not started; ``room()`` applies the full-queue policy (reject or wait, 002 §3.2).
"""

from __future__ import annotations

import asyncio
from collections import deque

from .tasks import QueueFull, TaskState

__all__ = ["SessionQueues"]


class SessionQueues:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.by_session: dict[str, deque[TaskState]] = {}
        self.busy: set[str] = set()  # sessions with a task running or being stepped
        self.depth = 0
        self._scheduled: set[str] = set()
        self._ready: asyncio.Queue[str] | None = None
        self._room: deque[asyncio.Future[None]] = deque()

    @property
    def ready(self) -> asyncio.Queue[str]:
        """Session ids ready to run (each at most once)."""
        if self._ready is None:
            self._ready = asyncio.Queue()
        return self._ready

    def full(self) -> bool:
        return self.depth >= self.limit

    async def room(self, on_full: str) -> None:
        """Return once a task fits: at once, after waiting (``wait``), or never (``reject``)."""
        while self.depth >= self.limit:
            if on_full == "reject":
                raise QueueFull(
                    f"the queue holds {self.depth} tasks (max_queue={self.limit}); this task "
                    "was not accepted: submit it later, or use on_full='wait'",
                    self.depth,
                )
            waiter = asyncio.get_running_loop().create_future()
            self._room.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # woken, then cancelled:
                    self._wake_one()  # the room it was given goes to the next waiter
                raise

    def put(self, task: TaskState, *, first: bool = False) -> None:
        queue = self.by_session.setdefault(task.session_id, deque())
        queue.appendleft(task) if first else queue.append(task)
        self.depth += 1
        self.schedule(task.session_id)

    def holds(self, task: TaskState) -> bool:
        return task in self.by_session.get(task.session_id, ())

    def take(self, task: TaskState) -> None:
        """Remove a queued task (it starts, or it was cancelled): room for one more."""
        queue = self.by_session[task.session_id]
        queue.remove(task)
        if not queue:
            del self.by_session[task.session_id]
        self.depth -= 1
        self._wake_one()

    def _wake_one(self) -> None:
        while self._room:
            waiter = self._room.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break

    def claim(self, task: TaskState) -> bool:
        """Take a queued task off the queue to run it outside the workers (``run_step``);
        False when its session is busy."""
        if task.session_id in self.busy:
            return False
        self.take(task)
        self.busy.add(task.session_id)
        return True

    def schedule(self, session_id: str) -> None:
        queued, busy = session_id in self.by_session, session_id in self.busy
        if queued and not busy and session_id not in self._scheduled:
            self._scheduled.add(session_id)
            self.ready.put_nowait(session_id)

    async def next(self) -> TaskState:
        """The first task of the next ready session, taken off the queue; its session is busy."""
        while True:
            sid = await self.ready.get()
            self._scheduled.discard(sid)
            queue = self.by_session.get(sid)
            if queue and sid not in self.busy:
                task = queue[0]
                self.take(task)
                self.busy.add(sid)
                return task

    def release(self, session_id: str) -> None:
        self.busy.discard(session_id)
        self.schedule(session_id)
