"""decide: is the reply a final answer or tool calls? Repair what would break the transcript.

Missing or duplicated tool-call ids get fresh ones (recorded as problems) so every call can
be answered exactly once. An empty reply gets a visible correction message and the loop
goes on (001 §3.1, 002 §2.4). During the wrap-up call after ``max_iterations`` tools are
off: any calls the model still makes are answered "not executed".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import Decided
from ..messages import AssistantMessage, ToolCall, UserMessage

if TYPE_CHECKING:
    from .run import Run

#: The correction sent after an empty reply. ``name`` marks it as the runtime's, not the user's.
EMPTY_REPLY_CORRECTION = (
    "Your last reply was empty. Either answer the user, or call one of the available tools."
)


def _normalise_ids(run: Run, message: AssistantMessage, problems: list[str]) -> AssistantMessage:
    calls = message.tool_calls or ()
    seen: set[str] = set()
    fixed: list[ToolCall] = []
    changed = False
    for i, call in enumerate(calls):
        cid = call.id
        if not cid or cid in seen:
            new = f"call_{run.id[2:8]}_{run.iteration}_{i}"
            problems.append(
                f"tool call {i} ({call.function.name}) had "
                + (f"a duplicate id {cid!r}" if cid else "no id")
                + f"; renamed to {new!r}"
            )
            call = call.model_copy(update={"id": new})
            changed = True
            cid = new
        seen.add(cid)
        fixed.append(call)
    if not changed:
        return message
    copied: AssistantMessage = message.model_copy(update={"tool_calls": tuple(fixed)})
    return copied


def decide(run: Run) -> None:
    assert run.response is not None
    message = run.response.message
    problems: list[str] = []
    if message.tool_calls:
        message = _normalise_ids(run, message, problems)
    run.append(message)
    calls = message.tool_calls or ()
    if calls and run.wrap_up:
        run.pending = list(calls)
        run.answer_pending(
            "not_executed",
            "tools are disabled for the final answer after max_iterations",
        )
        problems.append("tool calls during the final-answer call were not executed")
        run.decision = "final_answer"
        run.output = message.text
    elif calls:
        run.decision = "tool_calls"
        run.pending = list(calls)
    elif not message.text.strip() and not run.wrap_up:
        run.decision = "empty"
        problems.append("empty reply; a correction message was added")
        run.append(UserMessage(content=EMPTY_REPLY_CORRECTION, name="agentnb"))
    else:
        run.decision = "final_answer"
        run.output = message.text
    run.emit(
        Decided,
        decision=run.decision,
        calls=tuple(c.function.name for c in calls),
        problems=tuple(problems),
    )
