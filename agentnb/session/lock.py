"""The per-session run lock (invariant 4): one run at a time on a session.

A second run either waits (policy ``"wait"``) or is refused with
:class:`~agentnb.errors.SessionBusy` (``"reject"``). A stepper paused between steps holds the
lock too; a run that wants the session then is refused at once rather than hanging a notebook.
Waiters are futures on the waiting run's own loop, so runs on different loops can share it.

A wake-up is never lost: a waiter cancelled after ``release()`` chose it passes the turn on.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Literal

from ..errors import SessionBusy

__all__ = ["LockPolicy", "SessionLock"]

LockPolicy = Literal["wait", "reject"]


class SessionLock:
    """One holder at a time, FIFO waiters, a ``paused`` flag for steppers between steps."""

    __slots__ = ("enabled", "holder", "paused", "waiters")

    def __init__(self, *, enabled: bool = True) -> None:
        self.holder: str | None = None
        self.paused = False
        #: ``False`` switches the lock off, for teaching what interleaving does (000 §5.3).
        self.enabled = enabled
        self.waiters: deque[asyncio.Future[None]] = deque()

    @property
    def locked(self) -> bool:
        return self.holder is not None

    async def acquire(self, run_id: str, session_id: str, policy: LockPolicy) -> None:
        if not self.enabled:
            return
        while self.holder is not None:
            if policy == "reject" or self.paused:
                why = (
                    "is paused between steps; finish it with `await run.finish()`, or call "
                    "`run.cancel()` (a lost stepper is reachable as `session.active_run`)"
                    if self.paused
                    else "is still running; wait for it, or use lock_policy='wait'"
                )
                raise SessionBusy(
                    f"session {session_id!r} is held by run {self.holder!r}, which {why}",
                    session_id,
                    self.holder,
                )
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_next()  # we were chosen, but will not run: pass the turn on
                raise
            finally:
                if waiter in self.waiters:
                    self.waiters.remove(waiter)
        self.holder = run_id

    def release(self) -> None:
        if not self.enabled:
            return
        self.holder = None
        self.paused = False
        self._wake_next()

    def _wake_next(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.get_loop().call_soon_threadsafe(self._wake, waiter)
                return

    def _wake(self, waiter: asyncio.Future[None]) -> None:
        if waiter.done():  # cancelled between release() and now: wake the next one instead
            if self.holder is None:
                self._wake_next()
            return
        waiter.set_result(None)

    def __repr__(self) -> str:
        state = f"held by {self.holder}" if self.holder else "free"
        return f"<SessionLock {state}, {len(self.waiters)} waiting>"
