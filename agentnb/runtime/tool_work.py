"""Running one tool's work — a task or a thread — with a deadline that cannot be ignored.

A tool that times out, or ignores being cancelled, is cancelled and left to finish on its
own; the run goes on without it and its late result is dropped. An async tool gets a task of
its own, whose first step runs at once (a tool that never suspends costs no timer and no turn
of the event loop); a sync tool runs in a worker thread, and a new one starts whenever none is
idle, so a stuck tool never delays a later call. Each result is turned into content (``finish``)
the moment its tool returns, in the tool's own step or thread, so concurrent calls never see
each other's later effects.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .._fast import eager

T = TypeVar("T")

__all__ = ["Deadline", "Finished", "bounded", "in_thread", "isolated"]


async def isolated(
    coro: Coroutine[Any, Any, Any],
    timeout: float | None,
    finish: Callable[[Any], T],
    started: float,
) -> T:
    """``finish(await coro)`` in a task of its own, its first step run at once, here.

    ``timeout`` counts from ``started`` (``time.monotonic()`` when the call began).

    The task is eager (Python 3.12's ``eager_start``; :func:`agentnb._fast.eager` on 3.11):
    inside the tool ``asyncio.current_task()`` is its own from the first line, so
    ``asyncio.timeout`` and task groups work, and the first step runs in the caller's turn of
    the loop. A tool that returns without suspending is done: no timer, no turn of the loop.
    One that suspends goes on in its task, under :func:`bounded`.
    """
    task, outcome = eager(coro, finish)
    if outcome is not None:
        ok, value = outcome
        if ok:
            return value  # type: ignore[no-any-return]
        raise value
    if timeout is not None:  # the first step counts against the deadline too
        timeout = max(timeout - (time.monotonic() - started), 0.0)
    return await bounded(task, timeout)


async def bounded(work: asyncio.Future[T], timeout: float | None) -> T:
    """The result of ``work`` (a tool's task or thread), waiting ``timeout`` seconds at most.

    Neither a timeout nor the run's cancellation waits for a tool that ignores being cancelled:
    the tool is cancelled and left to finish on its own, and its late result is dropped.
    """
    loop = work.get_loop()
    gate: asyncio.Future[None] = loop.create_future()

    def open_gate(_: object = None) -> None:
        if not gate.done():
            gate.set_result(None)

    work.add_done_callback(open_gate)
    timer = loop.call_later(timeout, open_gate) if timeout is not None else None
    try:
        await gate
    except asyncio.CancelledError:
        if work.done() and not work.cancelled():
            raise Finished(work) from None  # keep what the tool produced
        _abandon(work)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    if not work.done():
        _abandon(work)
        raise TimeoutError
    return work.result()


class Finished(asyncio.CancelledError):
    """The run was cancelled, but the tool had already finished: its outcome is kept."""

    def __init__(self, work: asyncio.Future[Any]) -> None:
        super().__init__()
        self.work = work

    async def result(self) -> Any:
        return self.work.result()


def _abandon(work: asyncio.Future[Any]) -> None:
    work.cancel()
    work.add_done_callback(_dropped)


def _dropped(work: asyncio.Future[Any]) -> None:
    if not work.cancelled():
        work.exception()  # retrieved: a late failure of an abandoned tool is nobody's


def in_thread(fn: Callable[[], Any], finish: Callable[[Any], T]) -> asyncio.Future[T]:
    """``finish(fn())`` in a worker thread; the future resolves on the running loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            future.set_result(value) if ok else future.set_exception(value)

    context = contextvars.copy_context()  # the call's context, as in a task of its own

    def work() -> tuple[bool, Any]:
        try:
            return True, finish(context.run(fn))
        except BaseException as exc:
            return False, exc

    def deliver(outcome: tuple[bool, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    WORKERS.submit(work, deliver)
    return future


Job = tuple[Callable[[], Any], Callable[[Any], None]]


class Workers:
    """Daemon threads for sync tools, reused: starting a thread per call costs ~0.4 ms.

    A job goes to an idle worker, or to a new one when none is idle, so a stuck tool only ever
    holds its own thread. A worker counts as idle again before it hands its result back (the
    next call finds it), and ends after ``idle`` seconds without work.
    """

    def __init__(self, idle: float = 30.0) -> None:
        self.idle = idle
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._free = 0  # idle workers no job has claimed yet
        self._lock = threading.Lock()

    def submit(self, work: Callable[[], Any], deliver: Callable[[Any], None]) -> None:
        """Run ``deliver(work())`` in a worker thread."""
        with self._lock:
            claimed = self._free > 0
            if claimed:
                self._free -= 1
        self._jobs.put((work, deliver))
        if not claimed:
            threading.Thread(target=self._work, name="agentnb-tool", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                work, deliver = self._jobs.get(timeout=self.idle)
            except queue.Empty:
                with self._lock:
                    if self._free > 0:  # unclaimed: this worker may go
                        self._free -= 1
                        return
                continue  # a job was promised to an idle worker: wait for it
            outcome = work()
            with self._lock:
                self._free += 1
            deliver(outcome)
            del work, deliver, outcome  # hold nothing of a finished call while idle


WORKERS = Workers()


class Deadline:
    """``asyncio.timeout(seconds)`` in the run's own task, with one timer (for tools with
    ``isolated=False``): a third of the cost of ``asyncio.timeout``, and no task of its own.

    When the timer fires it cancels the task; leaving the block turns that into
    ``TimeoutError``, unless the task was also cancelled by someone else. A result that
    arrives after the deadline (the tool swallowed the cancellation) still counts as late.
    """

    __slots__ = ("_cancelling", "_fired", "_handle", "_seconds", "_task")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._task: asyncio.Task[Any] = task
        self._cancelling = task.cancelling()
        self._fired = False
        self._handle = task.get_loop().call_later(self._seconds, self._fire)

    def _fire(self) -> None:
        self._fired = True
        self._task.cancel()

    async def __aexit__(self, kind: type[BaseException] | None, exc: Any, tb: Any) -> None:
        self._handle.cancel()
        if self._fired and self._task.uncancel() <= self._cancelling:
            raise TimeoutError from exc
