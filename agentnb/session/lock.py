"""The per-session run lock (invariant 4): one run at a time on a session.

A second run either waits (policy ``"wait"``) or is refused with
:class:`~agentnb.errors.SessionBusy` (``"reject"``). A stepper paused between steps holds the
lock too; a run that wants the session then is refused at once rather than hanging a notebook.
Waiters are futures on the waiting run's own loop, so runs on different loops can share it.

A wake-up is never lost: a waiter cancelled after ``release()`` chose it passes the turn on.

The lock is the one home of "which run holds this session": its :class:`Hold` names the run
(``session.active_run`` reads it, so a view's Stop button can reach a run started anywhere),
and "paused" is derived from that run — held, but no stage executing.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Literal, Protocol

from ..errors import SessionBusy

__all__ = ["ActiveRun", "Hold", "LockPolicy", "SessionLock"]

LockPolicy = Literal["wait", "reject"]


class ActiveRun(Protocol):
    """What the session needs of the run holding it (a :class:`~agentnb.Run` satisfies it)."""

    @property
    def id(self) -> str: ...

    @property
    def driving(self) -> bool:
        """True while a stage executes; False while the run waits between steps."""
        ...

    @property
    def stage(self) -> str: ...

    @property
    def next_stage(self) -> str | None: ...

    def cancel(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Hold:
    """The run holding a session. Only :class:`SessionLock` creates and drops holds."""

    run_id: str
    run: ActiveRun

    @property
    def paused(self) -> bool:
        """Held between steps: no stage executing (a stepper waiting for ``step()``)."""
        return not self.run.driving


class SessionLock:
    """One :class:`Hold` at a time, FIFO waiters; ``paused`` is derived from the holding run."""

    __slots__ = ("enabled", "hold", "waiters")

    def __init__(self, *, enabled: bool = True) -> None:
        self.hold: Hold | None = None
        #: ``False`` switches the lock off, for teaching what interleaving does (000 §5.3);
        #: runs then never wait, and the hold names the latest run to start.
        self.enabled = enabled
        self.waiters: deque[asyncio.Future[None]] = deque()

    @property
    def holder(self) -> str | None:
        """The id of the run holding the session, if any."""
        return None if self.hold is None else self.hold.run_id

    @property
    def locked(self) -> bool:
        return self.hold is not None

    @property
    def paused(self) -> bool:
        return self.hold is not None and self.hold.paused

    def holds(self, run_id: str) -> bool:
        return self.hold is not None and self.hold.run_id == run_id

    async def acquire(
        self, run_id: str, session_id: str, policy: LockPolicy, run: ActiveRun
    ) -> Hold:
        if not self.enabled:
            self.hold = Hold(run_id, run)
            return self.hold
        while self.hold is not None:
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
        self.hold = Hold(run_id, run)
        return self.hold

    def release(self, run_id: str) -> None:
        """Drop ``run_id``'s hold (a no-op for a run that does not hold the session)."""
        if not self.holds(run_id):
            return
        self.hold = None
        if self.enabled:
            self._wake_next()

    def _wake_next(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.get_loop().call_soon_threadsafe(self._wake, waiter)
                return

    def _wake(self, waiter: asyncio.Future[None]) -> None:
        if waiter.done():  # cancelled between release() and now: wake the next one instead
            if self.hold is None:
                self._wake_next()
            return
        waiter.set_result(None)

    def __repr__(self) -> str:
        state = f"held by {self.holder}" if self.holder else "free"
        return f"<SessionLock {state}, {len(self.waiters)} waiting>"
