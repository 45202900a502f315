"""Run: the thin driver of one agent run over the loop in ``loop.py``.

``agent.start()`` returns a Run; ``await run.step()`` advances one stage and returns its
event, ``await run.finish()`` runs to the end, ``run.stream()`` yields events live,
``run.cancel()`` stops it at once or between stages. Whatever ends a run (final answer,
a stop policy, cancellation, an exception) goes through ``persist``: every tool call is
answered, a ``RunStopped`` event records why, and the session lock is released.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncGenerator, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..display import Shown
from ..errors import ConfigurationError, InvalidMessage, RunStateError
from ..events import Event
from ..messages import Message, UserMessage, text_message
from ..models.base import Usage
from ..session.records import checked_tags
from ..session.session import Session
from ..session.transcript import checked
from .loop import stages
from .persist import announce_stop, persist
from .result import RunResult
from .state import RunState

if TYPE_CHECKING:
    from ..agent import Agent
    from ..session.lock import LockPolicy
    from .guard import CallGuard

__all__ = ["Run", "RunResult"]


def input_message(value: str | Message | dict[str, Any] | None) -> Message | None:
    """The run's input as a user message, refused before the session is touched."""
    if value is None or isinstance(value, str):
        return None if value is None else text_message(UserMessage, value)
    message = checked(value, "run input")
    if message.role != "user":
        raise InvalidMessage(
            f"the run input must be a user message, not {message.role!r}; add other messages "
            "with session.append(...) and start the run with input=None to continue"
        )
    return message


class Run(Shown):
    """One run of an agent on a session: the stepper, and a read-only window on its state."""

    def __init__(
        self,
        agent: Agent,
        input: str | Message | dict[str, Any] | None,
        session: Session,
        *,
        lock_policy: LockPolicy | None = None,
        task_id: str | None = None,
        trace_id: str | None = None,
        interrupted: Iterable[str] = (),
        guard: CallGuard | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        if agent.model is None:
            raise ConfigurationError(
                f"agent {agent.name!r} has no model; pass model=... (for example "
                "an.models.ScriptedModel([...]) or an.travel.TravelModel())"
            )
        self.agent = agent
        self.session = session
        for name, value in (("task_id", task_id), ("trace_id", trace_id)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigurationError(f"{name} must be a non-empty str, got {value!r}")
        tags = None if tags is None else checked_tags(tags)
        self.state = RunState(
            agent,
            session,
            input_message(input),
            lock_policy or session.lock_policy,
            task_id=task_id,
            trace_id=trace_id,
            interrupted=frozenset(interrupted),
            guard=guard,
            tags=tags,
        )
        self.state.run_ref = weakref.ref(self)
        self._gen = stages(self.state)
        #: The stage the next ``step()`` runs (``None`` once the run is over).
        self.next_stage: str | None = "restore"
        self.done = False
        self.result: RunResult | None = None
        #: True while a stage executes (edits to the session wait for the next pause).
        self.driving = False
        self._task: asyncio.Task[Any] | None = None

    # -- a read-only window on the state ------------------------------------------------------
    id = property(lambda self: self.state.id)
    trace_id = property(lambda self: self.state.trace_id)
    events = property(lambda self: self.state.events)
    iteration = property(lambda self: self.state.iteration)
    stage = property(lambda self: self.state.stage)
    output = property(lambda self: self.state.output)
    stop_reason = property(lambda self: self.state.stop_reason)
    stop_detail = property(lambda self: self.state.stop_detail)
    error = property(lambda self: self.state.error)
    #: The run's :class:`~agentnb.session.records.RunRecord` (final once the run is over).
    record = property(lambda self: self.state.record)

    @property
    def usage(self) -> Usage:
        return self.state.usage

    # -- ending -----------------------------------------------------------------------------
    def _close(self) -> None:
        state = self.state
        self.done = True
        self.next_stage = None
        self.session.lock.release(state.id)
        self.result = RunResult(
            record=state.record,
            session=self.session,
            events=state.events,
            messages=list(self.session.transcript.messages[state.start_index :])
            if state.restored
            else [],
            error=state.error,
        )

    def _abort(self, reason: str, detail: str) -> None:
        """End the run now: answer open calls, persist, release. Synchronous on purpose."""
        if self.done:
            return
        state = self.state
        state.stop(reason, detail)
        if not state.restored:  # never got the session: leave it untouched
            state.close_record()
            announce_stop(state)
        else:
            try:
                state.answer_open("cancelled" if reason == "cancelled" else "not_executed", detail)
                persist(state)
            finally:
                self._close()  # whatever happens, the lock is released and a result recorded
            return
        self._close()

    # -- driving -----------------------------------------------------------------------------
    async def _drive(self, once: bool) -> None:
        if self.done:
            raise RunStateError(
                f"run {self.id} is over ({self.stop_reason}); start another with agent.start(...)"
            )
        if self.driving:
            raise RunStateError(f"run {self.id} is already being driven; await that first")
        state = self.state
        self.driving = True
        self._task = task = asyncio.current_task()
        try:
            if once:
                try:
                    _, self.next_stage = await anext(self._gen)
                except StopAsyncIteration:
                    raise RunStateError(
                        f"run {self.id} lost its event loop: asyncio.run() closes a run's stepper "
                        "when it returns, so drive a run from one loop (in a notebook, just await)"
                    ) from None
            else:
                async for _, after in self._gen:
                    self.next_stage = after
        except asyncio.CancelledError:
            requested = state.cancel_requested
            self._abort(
                "cancelled", "run.cancel() was called" if requested else "the task was cancelled"
            )
            if requested and task is not None and task.cancelling():
                task.uncancel()
                return
            raise
        except BaseException as exc:
            state.error = exc
            self._abort("error", f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(AttributeError, TypeError):
                exc.result = self.result  # type: ignore[attr-defined]
            raise
        finally:
            self.driving = False
            self._task = None
        if self.next_stage is None and not self.done:
            self._close()
            if state.error is not None:  # the store refused the commit
                state.error.result = self.result  # type: ignore[attr-defined]
                raise state.error

    async def step(self) -> Event:
        """Run the next stage and return its event (``RunStopped`` after ``persist``).

        Between steps you may edit ``session`` (edits that keep it a valid conversation) or
        the agent's instructions and tools: the next stage reads them afresh.
        """
        await self._drive(once=True)
        return self.state.events[-1]

    async def finish(self) -> RunResult:
        """Run the remaining stages and return the :class:`RunResult`."""
        if not self.done:
            await self._drive(once=False)
        assert self.result is not None
        return self.result

    def __await__(self) -> Any:
        return self.finish().__await__()

    async def stream(self) -> AsyncGenerator[Event, None]:
        """Drive the run in a background task and yield each event as it happens."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        sinks = self.state.sinks
        sinks.append(queue.put_nowait)
        task = asyncio.ensure_future(self.finish())
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            sinks.remove(queue.put_nowait)
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def cancel(self) -> None:
        """Stop the run: interrupt the stage in progress, or end a paused run right away.

        The run ends with ``stop_reason="cancelled"``; calls that did not finish are answered
        with an explicit "cancelled" result, so the session stays a valid conversation.
        Called from inside the run (a subscriber, a tool), it stops at the next ``check_stop``.
        """
        if self.done:
            return
        self.state.cancel_requested = True
        if self.driving:
            if self._task is not None and self._task is not asyncio.current_task():
                self._task.cancel()
        else:
            self._abort("cancelled", "run.cancel() was called between steps")

    # -- display -----------------------------------------------------------------------------
    def __repr__(self) -> str:
        state = f"stopped: {self.stop_reason}" if self.done else f"next: {self.next_stage}"
        return f"<Run {self.id} iteration {self.iteration}, {len(self.events)} events, {state}>"

    def static_html(self) -> str:
        """Its session's messages."""
        return self.session.static_bundle(include=("text/html",))["text/html"]
