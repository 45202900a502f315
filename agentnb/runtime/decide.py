"""decide: is the reply a final answer or tool calls? Repair what would break the transcript.

Missing or duplicated tool-call ids get fresh ones (recorded as problems) so every call can
be answered exactly once. An empty reply, or one the model client marked unusable (a tool
call written as text it could not parse), gets a visible correction message and the loop goes
on (001 §3.1, 002 §2.4). With tools off (the wrap-up call after ``max_iterations``) any calls
the model still makes are answered "not executed".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..events import Decided
from ..messages import RUNTIME_NAME, AssistantMessage, ToolCall, UserMessage
from ..models.base import ModelResponse
from ..models.response import NOT_SENT
from .state import RunState

#: How a reasoning text names a rule it followed: "[rule_name] …" (TravelModel does).
RULE_NAME = re.compile(r"\[([a-z][a-z0-9_]*)\]")
#: The correction sent after an empty reply. ``name`` marks it as the runtime's, not the user's.
EMPTY_REPLY_CORRECTION = (
    "Your last reply was empty. Either answer the user, or call one of the available tools."
)


@dataclass(slots=True)
class Decision:
    """``final_answer``, ``tool_calls``, ``correction`` (a correction message was sent), or
    ``invalid_output`` (a final answer that failed the output type past its retries).

    Read only by convention, like events: a frozen dataclass costs four times as much to build.
    """

    kind: str
    calls: tuple[ToolCall, ...] = ()
    problems: tuple[str, ...] = ()


def _normalise_ids(
    state: RunState, message: AssistantMessage, problems: list[str]
) -> AssistantMessage:
    calls = message.tool_calls or ()
    seen: set[str] = set()
    fixed: list[ToolCall] = []
    changed = False
    for i, call in enumerate(calls):
        cid = call.id
        if not cid or cid in seen:
            new = f"call_{state.id[2:8]}_{state.iteration}_{i}"
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


def decide(state: RunState, response: ModelResponse, *, tools_enabled: bool = True) -> Decision:
    message = response.message
    problems = list(response.repairs)
    if problems:  # the hot path has none
        problems = [p for p in problems if not _said(state, p)]
    given = message.tool_calls
    if given and (len(given) > 1 or not given[0].id):  # one call with an id needs no check
        message = _normalise_ids(state, message, problems)
    state.append(message)
    calls = message.tool_calls or ()
    correction = response.correction
    if calls and not tools_enabled:
        state.answer_open(
            "not_executed", "tools are disabled for the final answer after max_iterations"
        )
        problems.append("tool calls during the final-answer call were not executed")
        kind = "final_answer"
    elif calls:
        kind = "tool_calls"
    elif correction or (not message.text.strip() and tools_enabled):
        kind = "correction"
        problems.append(
            "empty reply; a correction message was added"
            if not correction
            else "unusable reply; a correction message was added"
        )
        state.append(UserMessage(content=correction or EMPTY_REPLY_CORRECTION, name=RUNTIME_NAME))
    else:
        kind = "final_answer"
    checked = None
    if kind == "final_answer":
        state.output = message.text
        if state.agent.output is not None:
            kind, checked = _check_output(state, message.text, problems, tools_enabled)
    decision = Decision(kind, calls if kind == "tool_calls" else (), tuple(problems))
    reasoning = message.reasoning_content or ""
    rules = tuple(dict.fromkeys(RULE_NAME.findall(reasoning))) if reasoning else ()
    state.emit(
        Decided,
        decision=kind,
        calls=tuple([c.function.name for c in calls]),
        problems=decision.problems,
        reasoning=reasoning,
        rules=rules,
        output=checked,
    )
    return decision


def _said(state: RunState, repair: str) -> bool:
    """A repair about the history (:data:`NOT_SENT`) this run already reported: the same
    messages are re-sent on every call, so it is said once per run, not on every call."""
    if NOT_SENT not in repair:
        return False
    if repair in state.said:
        return True
    state.said.add(repair)
    return False


def _check_output(
    state: RunState, text: str, problems: list[str], tools_enabled: bool
) -> tuple[str, dict[str, Any]]:
    """Validate a final answer against the agent's output type (002 §5.3): valid, it is the
    run's ``value``; invalid, a correction goes back to the model while ``output_retries``
    last (``correction``), then the run stops (``invalid_output``). What was checked, and
    how it went, is the ``Decided`` event's ``output``."""
    output = state.agent.output
    assert output is not None
    check = output.check(text)
    state.output_attempts += 1
    attempt, retries = state.output_attempts, state.agent.output_retries
    spec = output.spec
    shown = {"name": spec.name, "strict": spec.strict, "attempt": attempt,
             "attempts": retries + 1, "valid": check.valid, "error": check.error}  # fmt: skip
    if check.valid:
        state.record.value = check.value
        return "final_answer", shown
    state.record.value = None
    problems.append(f"invalid final answer (attempt {attempt} of {retries + 1}): {check.error}")
    if attempt <= retries and tools_enabled:
        state.append(UserMessage(content=output_correction(spec.name, check.error),
                                 name=RUNTIME_NAME))  # fmt: skip
        return "correction", shown
    return "invalid_output", shown


def output_correction(name: str, error: str) -> str:
    """The correction an invalid final answer gets (the model sees the reason)."""
    return (
        f"Your answer was not valid because {error}. Answer again with only a JSON object "
        f"that matches the {name} schema of the response format, no other text."
    )
