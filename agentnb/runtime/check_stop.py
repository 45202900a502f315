"""check_stop: the stop policies, in order (000 §3.1, 002 §2.1, §5.1).

1. final answer - the model replied without tool calls;
2. cancellation requested with ``run.cancel()`` between stages;
3. custom predicates ``stop_when`` - ``fn(run)`` returning True or a reason string;
4. repeated action - the same tool with the same canonical arguments ``repeat_limit`` times
   in a row (the 200-step accident of article 002);
5. token budget - the run's model calls used ``token_budget`` tokens or more;
6. ``max_iterations`` model calls - stop, or first ask once more for a final answer with
   tools disabled when ``final_answer_on_stop=True``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..events import StopChecked

if TYPE_CHECKING:
    from .run import Run


def _policies(run: Run) -> tuple[str, str] | None:
    agent = run.agent
    if run.decision == "final_answer":
        if run.wrap_up:
            return "max_iterations", (
                f"reached max_iterations={agent.max_iterations}; the model gave a final answer "
                "with tools disabled"
            )
        return "final_answer", "the model answered without calling a tool"
    if run.cancel_requested:
        return "cancelled", "run.cancel() was called"
    for predicate in agent.stop_when:
        verdict = predicate(run)
        if verdict:
            name = getattr(predicate, "__name__", repr(predicate))
            return "custom", verdict if isinstance(verdict, str) else f"{name} returned True"
    limit = agent.repeat_limit
    recent = run.recent_actions
    if limit and len(recent) >= limit and recent.count(recent[-1]) >= limit:
        name, args = recent[-1]
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
        return "repeated_action", (
            f"{name} was called {limit} times in a row with the same arguments {shown}"
        )
    if agent.token_budget is not None and run.usage.total_tokens >= agent.token_budget:
        used = run.usage.total_tokens
        return "token_budget", f"the run used {used} tokens; token_budget={agent.token_budget}"
    if run.iteration >= agent.max_iterations:
        if agent.final_answer_on_stop and not run.wrap_up:
            run.wrap_up = True
            return None
        return "max_iterations", (
            f"reached max_iterations={agent.max_iterations} model calls without a final answer"
        )
    return None


def check_stop(run: Run) -> None:
    verdict = _policies(run)
    if verdict is None:
        detail = "asking for a final answer with tools disabled" if run.wrap_up else ""
        run.emit(StopChecked, stop=False, detail=detail)
        return
    reason, detail = verdict
    run.stop(reason, detail)
    run.emit(StopChecked, stop=True, reason=reason, detail=detail)
