"""Running one tool's work — a task or a thread — with a deadline that cannot be ignored.

A tool that times out, or ignores being cancelled, is cancelled and left to finish on its
own; the run goes on without it and its late result is dropped. A sync tool runs in a
thread of its own, so a stuck one never delays a later call.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tools.tool import Tool

__all__ = ["Deadline", "Finished", "bounded", "in_thread"]


async def bounded(work: asyncio.Future[Any], timeout: float | None) -> Any:
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


def in_thread(tool: Tool, kwargs: dict[str, Any]) -> asyncio.Future[Any]:
    """Run a sync tool in a fresh daemon thread; the future resolves on the running loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            future.set_result(value) if ok else future.set_exception(value)

    def work() -> None:
        try:
            outcome: tuple[bool, Any] = (True, tool.fn(**kwargs))
        except BaseException as exc:
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name=f"agentnb-tool-{tool.name}", daemon=True).start()
    return future


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
