"""Run: the state of one agent run and the driver of the loop.

``agent.start()`` returns a Run; ``await run.step()`` advances one stage and returns its
event, ``await run.finish()`` runs to the end, ``run.stream()`` yields events live,
``run.cancel()`` stops it at once or between stages. Whatever ends a run (final answer,
a stop policy, cancellation, an exception) goes through ``persist``: every tool call is
answered, a ``RunStopped`` event records why, and the session lock is released.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _html
from ..errors import RunStateError
from ..events import Event, MessageAppended, Origin, RunStopped, ToolFinished
from ..messages import Message, ToolCall, ToolMessage
from ..models.base import ModelRequest, ModelResponse, Usage
from ..session import RunRecord, Session
from ..tools import error_content
from ..trace import Trace
from .execute_tools import Outcome
from .loop import stages
from .persist import persist

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["Run", "RunResult"]

_STAGE_AFTER = {
    "restore": "assemble",
    "assemble": "call_model",
    "call_model": "decide",
    "execute_tools": "check_stop",
    "persist": None,
}


@dataclass
class RunResult:
    """What a run produced, and why it stopped."""

    output: str | None
    stop_reason: str
    stop_detail: str
    session: Session
    events: list[Event]
    run_id: str
    trace_id: str
    iterations: int
    usage: Usage
    messages: list[Message] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def trace(self) -> Trace:
        """The events as a :class:`~agentnb.trace.Trace` (DataFrame, JSONL)."""
        return Trace(self.events)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the model made in this run, in order."""
        return [c for m in self.messages for c in (getattr(m, "tool_calls", None) or ())]

    def __repr__(self) -> str:
        out = (self.output or "").replace("\n", " ")
        out = out if len(out) < 80 else out[:77] + "..."
        return (
            f"<RunResult {self.stop_reason}: {self.iterations} model calls, "
            f"{len(self.tool_calls)} tool calls, {self.usage.total_tokens} tokens; {out!r}>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        title = f"stop_reason={self.stop_reason} — {self.stop_detail}"
        wires = [m.wire() for m in self.messages]
        lines = [repr(self), title] + [f"  {m!r}" for m in self.messages]
        return {"text/plain": "\n".join(lines), "text/html": _html.transcript(wires, title=title)}


class Run:
    """One run of an agent on a session: its state, its events, and the stepper."""

    def __init__(
        self,
        agent: Agent,
        input: str | Message | dict[str, Any] | None,
        session: Session,
        *,
        lock_policy: str | None = None,
    ) -> None:
        self.agent = agent
        self.session = session
        self.input = input
        self.input_text: str | None = (
            input
            if isinstance(input, str) or input is None
            else str(input.get("content") if isinstance(input, dict) else input.text)
        )
        self.id = "r-" + uuid.uuid4().hex[:12]
        self.trace_id = uuid.uuid4().hex
        self.lock_policy: Any = lock_policy or session.lock_policy
        self.events: list[Event] = []
        self.seq = 0
        self.iteration = 0
        self.stage = "restore"
        #: The stage the next ``step()`` runs (``None`` once the run is over).
        self.next_stage: str | None = "restore"
        self.request: ModelRequest | None = None
        self.response: ModelResponse | None = None
        self.decision: str | None = None
        self.pending: list[ToolCall] = []
        self.outcomes: dict[str, Outcome] = {}
        #: The last ``repeat_limit`` executed calls as (name, canonical arguments).
        self.recent_actions: deque[tuple[str, dict[str, Any]]] = deque(
            maxlen=max(agent.repeat_limit, 1)
        )
        self._tokens = [0, 0, 0]  # prompt, completion, total: summed without new objects
        self._estimated = False
        self.prompt_estimate = 0
        self.output: str | None = None
        self.stop_reason: str | None = None
        self.stop_detail = ""
        self.stop_stage: str | None = None
        self.wrap_up = False
        self.cancel_requested = False
        self.locked = False
        self.done = False
        self.start_index = len(session)
        self.record: RunRecord | None = None
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self._gen = stages(self)
        self.origin = Origin.now(session.id, self.id, self.trace_id)
        self._sinks: list[Any] = []
        self._task: asyncio.Task[Any] | None = None
        self._stepping = False

    # -- used by the stages ------------------------------------------------------------------
    def emit(self, cls: type[Event], **fields: Any) -> Event:
        """Record an event and hand it to the session's subscribers and live streams."""
        self.seq += 1
        event = cls(
            seq=self.seq,
            stage=self.stage,
            iteration=self.iteration,
            time=time.monotonic(),
            origin=self.origin,
            **fields,
        )
        self.events.append(event)
        if self.session._subscribers:
            self.session._publish(event)
        for sink in self._sinks:
            sink(event)
        return event

    def append(self, message: Message) -> None:
        index = self.session._add(message)
        self.emit(MessageAppended, index=index, message=message)

    def answer(self, call: ToolCall, content: str) -> None:
        """Append the tool message that answers ``call``."""
        self.pending.remove(call)
        self.append(ToolMessage.answer(call.id, call.function.name, content))

    def answer_pending(self, kind: str, why: str) -> None:
        """Answer every unanswered call: its real result if it finished, else ``kind``."""
        for call in list(self.pending):
            outcome = self.outcomes.get(call.id)
            if outcome is None:
                content = error_content(
                    f"{kind.replace('_', ' ')}: {why}",
                    "this call did not run; do not assume its result",
                )
                self.emit(
                    ToolFinished,
                    call_id=call.id,
                    name=call.function.name,
                    ok=False,
                    content=content,
                    latency=0.0,
                    error_kind=kind,
                )
            else:
                content = outcome.content
            self.answer(call, content)

    def record_action(self, name: str, arguments: dict[str, Any]) -> None:
        # Parsed dicts compare equal whatever their key order: canonical without re-encoding.
        self.recent_actions.append((name, arguments))

    def add_usage(self, usage: Usage) -> None:
        tokens = self._tokens
        tokens[0] += usage.prompt_tokens
        tokens[1] += usage.completion_tokens
        tokens[2] += usage.total_tokens
        self._estimated = self._estimated or usage.estimated

    @property
    def usage(self) -> Usage:
        """Tokens used by this run's model calls so far."""
        prompt, completion, total = self._tokens
        return Usage(prompt, completion, total, self._estimated)

    def stop(self, reason: str, detail: str) -> None:
        self.stop_reason = reason
        self.stop_detail = detail
        self.stop_stage = self.stage

    def finish_persist(self) -> None:
        persist(self)
        self._close()

    def _close(self) -> None:
        self.done = True
        self.next_stage = None
        if self.locked:
            self.session.lock.release()
            self.locked = False
        self.result = RunResult(
            output=self.output,
            stop_reason=self.stop_reason or "error",
            stop_detail=self.stop_detail,
            session=self.session,
            events=self.events,
            run_id=self.id,
            trace_id=self.trace_id,
            iterations=self.iteration,
            usage=self.usage,
            messages=list(self.session._messages[self.start_index :]) if self.record else [],
            error=self.error,
        )

    def _abort(self, reason: str, detail: str) -> None:
        """End the run now: answer open calls, persist, release. Synchronous on purpose."""
        if self.done:
            return
        self.stop(reason, detail)
        if not self.locked:  # never got the session: leave it untouched
            self.emit(
                RunStopped,
                reason=reason,
                detail=detail,
                output=None,
                iterations=0,
                usage=self.usage,
                stopped_in=self.stage,
            )
            self._close()
            return
        if self.pending:
            kind = "cancelled" if reason == "cancelled" else "not_executed"
            self.answer_pending(kind, detail)
        self.finish_persist()

    # -- driving -----------------------------------------------------------------------------
    async def _drive(self, once: bool) -> None:
        if self.done:
            raise RunStateError(
                f"run {self.id} is over ({self.stop_reason}); start another with agent.start(...)"
            )
        if self._stepping:
            raise RunStateError(f"run {self.id} is already being driven; await that first")
        self._stepping = True
        self._task = task = asyncio.current_task()
        if self.locked:
            self.session.lock.paused = False
        try:
            if once:
                stage = await anext(self._gen)
                self.next_stage = (
                    None if self.done else _STAGE_AFTER.get(stage) or self._after_branch(stage)
                )
            else:
                async for _ in self._gen:
                    pass
        except asyncio.CancelledError:
            requested = self.cancel_requested
            self._abort(
                "cancelled", "run.cancel() was called" if requested else "the task was cancelled"
            )
            if requested and task is not None and task.cancelling():
                task.uncancel()
                return
            raise
        except BaseException as exc:
            self.error = exc
            self._abort("error", f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(AttributeError, TypeError):
                exc.result = self.result  # type: ignore[attr-defined]
            raise
        finally:
            self._stepping = False
            self._task = None
            if self.locked:
                self.session.lock.paused = True

    def _after_branch(self, stage: str) -> str:
        if stage == "decide":
            return "execute_tools" if self.pending else "check_stop"
        return "persist" if self.stop_reason is not None else "assemble"  # after check_stop

    async def step(self) -> Event:
        """Run the next stage and return its event (``RunStopped`` after ``persist``).

        Between steps you may edit ``session`` or the agent's instructions and tools: the
        next stage reads them afresh.
        """
        await self._drive(once=True)
        return self.events[-1]

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
        self._sinks.append(queue.put_nowait)
        task = asyncio.ensure_future(self.finish())
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            self._sinks.remove(queue.put_nowait)
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def cancel(self) -> None:
        """Stop the run: interrupt the stage in progress, or end a paused run right away.

        The run ends with ``stop_reason="cancelled"``; calls that did not finish are answered
        with an explicit "cancelled" result, so the session stays a valid conversation.
        """
        if self.done:
            return
        self.cancel_requested = True
        if self._stepping and self._task is not None:
            self._task.cancel()
        elif not self._stepping:
            self._abort("cancelled", "run.cancel() was called between steps")

    # -- display -----------------------------------------------------------------------------
    def __repr__(self) -> str:
        state = f"stopped: {self.stop_reason}" if self.done else f"next: {self.next_stage}"
        return f"<Run {self.id} iteration {self.iteration}, {len(self.events)} events, {state}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {
            "text/plain": repr(self),
            **{k: v for k, v in self.session._repr_mimebundle_().items() if k == "text/html"},
        }
