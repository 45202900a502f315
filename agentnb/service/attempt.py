"""One attempt of a task: recover what a crash left, run the agent, classify the end.

Shared by every backend. An attempt is idempotent over the store: it starts from the
session as last committed (the end of a tool round, or of a run), so it never repeats a
round that landed. Before a side-effecting call runs, the task log records it (a
synchronous write, before the tool is invoked); if the worker dies before that round is
committed, the next attempt finds the record and answers the call ``uncertain`` ("this call
may or may not have happened; check before repeating"), shown in the view and to the model,
and never runs it again on its own. Calls without side effects in that round simply run
again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import Event, ToolStarted
from ..messages import AssistantMessage, parse_message
from ..runtime.execute_tools import execute_tools
from ..runtime.state import RunState
from ..tools.results import UNCERTAIN, UNCERTAIN_HINT, error_content
from .policies import Retry

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime.run import Run, RunResult
    from ..session import Session
    from .journal import TaskLog

__all__ = ["Outcome", "journal_hook", "outcome_of", "run_attempt"]

Sink = Callable[[Event], Any]


@dataclass
class Outcome:
    """How one attempt ended."""

    status: str  # done | error | cancelled
    stop_reason: str
    output: str | None = None
    error: str | None = None
    retryable: bool = False
    iteration: int = 0
    tokens: int = 0
    run_id: str | None = None
    uncertain: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    result: RunResult | None = None
    latency: float = 0.0

    def record(self, attempt: int) -> dict[str, Any]:
        """The JSON-ready line of this attempt in the task's ``attempts``."""
        return {
            "attempt": attempt,
            "run_id": self.run_id,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "error": self.error,
            "iteration": self.iteration,
            "tokens": self.tokens,
            "latency": round(self.latency, 6),
            "uncertain": list(self.uncertain),
        }


def journal_hook(agent: Agent, session: Session, log: TaskLog, task_id: str) -> Sink:
    """A run sink writing each side-effecting call to the log before the tool is invoked."""

    def hook(event: Event) -> None:
        if type(event) is ToolStarted and agent.tools.has_side_effects(event.name):
            at = session.transcript.open_at
            assistant = session.transcript.messages[at].wire() if at is not None else {}
            log.begin_call(task_id, session.id, session.version, event.call_id, event.name,
                           assistant)  # fmt: skip

    return hook


async def recover(
    agent: Agent, session: Session, log: TaskLog, task_id: str, trace_id: str, sinks: list[Sink]
) -> tuple[list[str], list[Event]]:
    """Finish the round a crash interrupted: ``uncertain`` for side-effecting calls that were
    in flight, a fresh run of the others. Returns the call ids answered ``uncertain``."""
    # A round built on the version still stored never landed: its calls were in flight. (Call
    # ids are no key: models reuse "call_0" in every turn.)
    live = [r for r in log.open_calls(task_id) if r["version"] == session.version]
    if not live:
        return [], []
    assistant = parse_message(live[-1]["assistant"], where="in-flight call")
    assert isinstance(assistant, AssistantMessage)
    in_flight = {r["call_id"] for r in live}
    state = RunState(agent, session, None, session.lock_policy, task_id=task_id, trace_id=trace_id)
    state.stage = "execute_tools"
    state.sinks.extend(sinks)
    messages = session.transcript.messages
    if not messages or messages[-1].wire() != assistant.wire():
        state.append(assistant)  # the round's assistant message never landed: it does now
    uncertain = []
    for call in session.transcript.open_calls():
        if call.id in in_flight and agent.tools.has_side_effects(call.function.name):
            uncertain.append(call.id)
            content = error_content(UNCERTAIN, UNCERTAIN_HINT, kind="uncertain", call=call.id)
            state.answer(call, content)
    if session.transcript.open_calls():
        await execute_tools(state)  # calls without side effects (or never started) run again
    else:
        session.commit()
    return uncertain, state.events


def _answered(session: Session, start_len: int) -> str | None:
    """The final answer already committed for this task (an attempt ended, its record did
    not: the worker died in between), or None."""
    messages = session.transcript.messages
    if len(messages) <= start_len + 1 or not session.is_valid:
        return None
    last = messages[-1]
    if isinstance(last, AssistantMessage) and not last.tool_calls:
        return last.text or ""
    return None


async def run_attempt(
    agent: Agent,
    session: Session,
    *,
    task_id: str,
    trace_id: str,
    text: str,
    start_len: int,
    log: TaskLog,
    sinks: list[Sink],
    on_run: Callable[[Run], Any] | None = None,
) -> Outcome:
    """One attempt of the task: recover, then run the agent on the session until it stops."""
    started = time.monotonic()
    hooks = [*sinks, journal_hook(agent, session, log, task_id)]
    uncertain, events = await recover(agent, session, log, task_id, trace_id, hooks)
    done = _answered(session, start_len)
    if done is not None and not uncertain:
        return Outcome("done", "final_answer", output=done, events=events,
                       latency=time.monotonic() - started)  # fmt: skip
    run = agent.start(
        text if len(session) <= start_len else None,
        session=session,
        task_id=task_id,
        trace_id=trace_id,
    )
    run.state.sinks.extend(hooks)
    if on_run is not None:
        on_run(run)
    error: BaseException | None = None
    try:
        result = await run.finish()
    except Exception as exc:  # the run is closed and its result attached (Run._drive)
        error = exc
        result = run.result  # type: ignore[assignment]
    return outcome_of(run, result, error, uncertain, events, time.monotonic() - started)


def outcome_of(
    run: Run,
    result: RunResult | None,
    error: BaseException | None,
    uncertain: list[str],
    before: list[Event],
    latency: float,
) -> Outcome:
    error = error or (result.error if result is not None else None)
    reason = result.stop_reason if result is not None else "error"
    status = "cancelled" if reason == "cancelled" else "error" if reason == "error" else "done"
    return Outcome(
        status,
        reason,
        output=result.output if result is not None else None,
        error=None if error is None else f"{type(error).__name__}: {error}",
        retryable=status == "error" and Retry.retryable(error),
        iteration=run.iteration,
        tokens=run.usage.total_tokens,
        run_id=run.id,
        uncertain=uncertain,
        events=[*before, *run.events],
        result=result,
        latency=latency,
    )
