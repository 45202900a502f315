"""A worker's lease: its heartbeat, what it does when it loses it, and taking over the lost.

A worker renews its row in ``agentnb_workers`` every ``heartbeat`` seconds from a thread of
its own (an event loop busy with a long cell does not stop it). A survivor *takes* a lost
worker (:mod:`.workers`) in one conditional update (``alive`` to ``dead``, and who took it):
of two survivors, one wins. The lost worker's tasks then move to the taker, each claimed in
one conditional update too (:func:`take_over`), and the DBOS backend hands its workflows
back to the queue (DBOS's recovery for other executors).

A task is therefore never taken from a worker that is alive, by construction: taking needs
the lapsed lease or the vanished process, and a worker that finds itself declared dead (its
next beat is refused) stops at once - a worker process exits, an in-process runtime cancels
its runs and refuses new work. The window in between is closed where it matters: the
journal entry that must precede every side-effecting call is written only while the writer
is alive (:meth:`~agentnb.service.journal.SQLTaskLog.begin_call`), so a call of a worker
declared dead never runs; its taker answers it as the journal says.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ConfigurationError
from .tasks import FINAL
from .workers import WorkerRow, Workers, new_worker_id, process_gone, started_at

if TYPE_CHECKING:
    from .sqllog import SQLTaskLog
    from .tasks import TaskState

__all__ = ["Membership", "join_in_loop", "take_over"]

logger = logging.getLogger("agentnb.service")
T = TypeVar("T")


class Membership:
    """This process among the workers of one task log.

    Args:
        table: the workers table (in the store every worker reaches).
        worker_id: this worker's id; a unique one when None.
        heartbeat: seconds between beats.
        lease: seconds without a beat after which a worker counts as lost.
        on_lost: called (from the heartbeat thread) when this worker is declared dead or its
            own lease lapsed: it must stop running tasks.
        reap: called (from the heartbeat thread) after each beat: the survivors' takeover.
        owner: the object this worker runs for: once it is gone (never closed, collected),
            the worker stops and says so.
    """

    def __init__(
        self,
        table: Workers,
        worker_id: str | None = None,
        *,
        heartbeat: float = 1.0,
        lease: float = 5.0,
        on_lost: Callable[[str], Any] | None = None,
        reap: Callable[[], Any] | None = None,
        owner: object = None,
    ) -> None:
        if not 0 < heartbeat < lease:
            raise ConfigurationError(
                f"a worker's heartbeat ({heartbeat} s) must be positive and shorter than its "
                f"lease ({lease} s)"
            )
        self.table = table
        self.id = worker_id or new_worker_id()
        self.heartbeat = heartbeat
        self.lease = lease
        self.on_lost = on_lost
        self.reap = reap
        self.lost: str | None = None  #: why this worker stopped counting as alive
        self._owner = None if owner is None else weakref.ref(owner)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = 0.0

    # -- this worker -------------------------------------------------------------------------
    def join(self) -> None:
        """Register as alive (refused while another live process holds this id) and start
        the heartbeat."""
        pid = os.getpid()
        if not self.table.join(self.id, pid, started_at(pid), self.lease):
            found = self.table.rows(self.id)
            row = found[0] if found else None
            if row is None or not process_gone(row):
                age = f", last beat {row.age:.1f} s ago" if row is not None else ""
                where = f"pid {row.pid} on {row.host}" if row is not None else "another process"
                raise ConfigurationError(
                    f"worker id {self.id!r} is in use by a live worker ({where}{age}): give "
                    "each worker its own --executor-id, or none (a unique one is made)"
                )
            self.table.join(self.id, pid, started_at(pid), self.lease, force=True)
        self._last = time.monotonic()
        self._thread = threading.Thread(target=self._beat, name=f"agentnb-{self.id}", daemon=True)
        self._thread.start()

    def leave(self) -> None:
        """Stop beating and mark this worker stopped (its unfinished tasks can be taken)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.heartbeat * 3)
        if self.lost is None:
            with contextlib.suppress(Exception):
                self.table.leave(self.id)

    @property
    def alive(self) -> bool:
        return self.lost is None and not self._stop.is_set()

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat):
            if self._owner is not None and self._owner() is None:  # dropped without close()
                self._stop.set()
                with contextlib.suppress(Exception):
                    self.table.leave(self.id)
                return
            try:
                kept = self.table.beat(self.id)
            except Exception as exc:  # the database is unreachable: the lease runs out
                if time.monotonic() - self._last > self.lease:
                    self._lose(f"its lease lapsed: no beat for {self.lease:g} s ({exc})")
                    return
                logger.warning("worker %s could not beat: %s", self.id, exc)
                continue
            if not kept:
                found = self.table.rows(self.id)
                by = found[0].taken_by if found else None
                self._lose(f"it was declared dead{f' by {by}' if by else ''} (lease lapsed)")
                return
            self._last = time.monotonic()
            if self.reap is not None:
                try:
                    self.reap()
                except Exception:  # a takeover that failed is tried again next beat
                    logger.exception("worker %s could not take over a lost worker", self.id)

    def _lose(self, why: str) -> None:
        self.lost = why
        logger.error("worker %s stops: %s", self.id, why)
        if self.on_lost is not None:
            self.on_lost(why)

    # -- the others --------------------------------------------------------------------------
    def lost_workers(self) -> list[WorkerRow]:
        """Workers to take over: counted alive with their lease lapsed or their process gone,
        or stopped (a worker stopped with SIGTERM may leave workflows pending)."""
        return [
            row
            for row in self.table.rows()
            if row.id != self.id
            and (
                row.state == "stopped"
                or (row.state == "alive" and (row.age > self.lease or process_gone(row)))
            )
        ]

    def take(self, row: WorkerRow) -> bool:
        """Declare ``row``'s worker dead, taken by this one; True for the one taker that won."""
        return self.table.take(row.id, self.id, self.lease, force=process_gone(row))


def take_over(member: Membership, log: SQLTaskLog, skip: set[str]) -> list[TaskState]:
    """Take the lost workers, then claim every unfinished task whose worker is not alive (or
    that names none: a row of the first release), one conditional update each; the tasks
    this worker won, in submission order (``skip``: ids it runs already)."""
    for row in member.lost_workers():
        member.take(row)
    alive = {row.id for row in member.table.rows() if row.state == "alive"}
    won = []
    for task in log.tasks():
        if task.status in FINAL or task.id in skip:
            continue
        if task.owner in alive and task.owner != member.id:
            logger.info("task %s runs on live worker %s: left alone", task.id, task.owner)
            continue
        if log.claim(task.id, member.id, task.owner):
            task.owner = member.id
            won.append(task)
    return won


def join_in_loop(log: SQLTaskLog, owner: T, lose: Callable[[T, str], Any]) -> Membership:
    """Join ``log``'s workers for ``owner`` (a backend in this event loop): if this worker is
    declared dead, ``lose(owner, why)`` runs in the loop (the owner is held weakly: a runtime
    dropped without close() stops its worker)."""
    loop, ref = asyncio.get_running_loop(), weakref.ref(owner)

    def lost(why: str) -> None:  # from the heartbeat thread
        alive = ref()
        if alive is not None and not loop.is_closed():
            loop.call_soon_threadsafe(lose, alive, why)

    member = Membership(log.workers, on_lost=lost, owner=owner)
    member.join()
    log.worker = member.id
    return member
