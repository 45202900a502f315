"""check_stop: the stop policies, in order (000 §3.1, 002 §2.1, §5.1).

1. final answer - the model replied without tool calls;
2. cancellation requested with ``run.cancel()`` (from inside the run, e.g. a subscriber);
3. custom predicates ``stop_when`` - ``fn(view)`` returning True or a reason string, where
   ``view`` is a read-only :class:`RunView` of the run;
4. repeated action - the same tool with the same arguments ``repeat_limit`` times in a row
   (the 200-step accident of article 002);
5. token budget - the run's model calls used ``token_budget`` tokens or more;
6. ``max_iterations`` model calls - stop, or first ask once more for a final answer with
   tools disabled when ``final_answer_on_stop=True`` (the wrap-up call).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..events import Event, StopChecked
from ..messages import Message, ToolCall
from ..models.base import Usage
from .decide import Decision
from .state import RunState


@dataclass(frozen=True, slots=True)
class Verdict:
    """``stop`` with a reason and words, or go on (with ``wrap_up`` for one last call)."""

    stop: bool
    reason: str | None = None
    detail: str = ""
    wrap_up: bool = False


class RunView:
    """What a ``stop_when`` predicate may read of a run: nothing it could change."""

    __slots__ = ("_state",)

    def __init__(self, state: RunState) -> None:
        self._state = state

    @property
    def id(self) -> str:
        return self._state.id

    @property
    def iteration(self) -> int:
        return self._state.iteration

    @property
    def usage(self) -> Usage:
        return self._state.usage

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._state.events)

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages this run added so far (its input first)."""
        return tuple(self._state.session.transcript.messages[self._state.start_index :])

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(c for m in self.messages for c in (getattr(m, "tool_calls", None) or ()))

    @property
    def last_message(self) -> Message | None:
        messages = self._state.session.transcript.messages
        return messages[-1] if messages else None

    @property
    def output(self) -> str | None:
        return self._state.output

    def __repr__(self) -> str:
        return f"<RunView {self.id} iteration {self.iteration}>"


def _policies(state: RunState, decision: Decision, wrap_up: bool) -> Verdict | None:
    agent = state.agent
    if state.awaiting:  # calls wait for approval: the session keeps them open until then
        names = ", ".join(f"{r.name} ({r.call_id})" for r in state.awaiting)
        return Verdict(True, "awaiting_approval", f"waiting for approval of {names}")
    if decision.kind == "final_answer":
        if wrap_up:
            why = f"reached max_iterations={agent.max_iterations}; the model gave a final answer"
            return Verdict(True, "max_iterations", why + " with tools disabled")
        return Verdict(True, "final_answer", "the model answered without calling a tool")
    if decision.kind == "invalid_output":
        why = (
            f"the final answer failed the output type {agent.output_retries + 1} times "
            f"(output_retries={agent.output_retries}): {decision.problems[-1]}"
        )
        return Verdict(True, "invalid_output", why)
    if state.cancel_requested:
        return Verdict(True, "cancelled", "run.cancel() was called")
    if agent.stop_when:
        view = RunView(state)
        for predicate in agent.stop_when:
            verdict = predicate(view)
            if verdict:
                name = getattr(predicate, "__name__", repr(predicate))
                why = verdict if isinstance(verdict, str) else f"{name} returned True"
                return Verdict(True, "custom", why)
    limit = agent.repeat_limit
    recent: Sequence[tuple[str, Any]] = state.actions
    if limit and len(recent) >= limit and recent.count(recent[-1]) >= limit:
        name, args = recent[-1]
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
        why = f"{name} was called {limit} times in a row with the same arguments {shown}"
        return Verdict(True, "repeated_action", why)
    used = state.tokens[2]
    if agent.token_budget is not None and used >= agent.token_budget:
        why = f"the run used {used} tokens; token_budget={agent.token_budget}"
        return Verdict(True, "token_budget", why)
    if state.iteration >= agent.max_iterations:
        if agent.final_answer_on_stop and not wrap_up:
            return Verdict(
                False, detail="asking for a final answer with tools disabled", wrap_up=True
            )
        why = f"reached max_iterations={agent.max_iterations} model calls without a final answer"
        return Verdict(True, "max_iterations", why)
    return None


_GO_ON = Verdict(False)


def check_stop(state: RunState, decision: Decision, wrap_up: bool = False) -> Verdict:
    verdict = _policies(state, decision, wrap_up)
    if verdict is None:  # go on, and say why: each limit and where the run stands against it
        agent = state.agent
        same, last = 0, state.actions[-1] if state.actions else None
        for action in state.actions:  # inline, no call: this runs every iteration
            same = same + 1 if action == last else 0
        budget = agent.token_budget
        limit = agent.repeat_limit
        repeat = "no repeated action" if same < 2 else f"the same call {same} of {limit} times"
        total = state.tokens[2]
        used = f"{total:,}{'' if budget is None else f' of {budget:,}'} tokens used"
        detail = f"iteration {state.iteration} of {agent.max_iterations}, {repeat}, {used}"
        state.emit(StopChecked, stop=False, detail=detail)
        return _GO_ON
    if verdict.stop:
        assert verdict.reason is not None
        state.stop(verdict.reason, verdict.detail)
        state.emit(StopChecked, stop=True, reason=verdict.reason, detail=verdict.detail)
    else:
        state.emit(StopChecked, stop=False, detail=verdict.detail)
    return verdict
