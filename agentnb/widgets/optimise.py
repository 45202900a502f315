"""The optimiser's live view: the candidate tree, the score over the budget, the proposal.

``an.optimize(...)`` in a notebook shows it (``OptimiseView(opt)`` shows any optimisation,
running or loaded). It fills in while the run goes: each candidate appears under its parent
with its status; the chart draws the incumbent's validation success as a step over the metric
calls spent, and each candidate's training success as a point; the current proposal's
rationale shows as soon as the proposer answered. A click on a candidate shows its diff
against its parent (the changed lines highlighted), its rationale and the gate's verdict.
**Stop** stops the run and keeps what the gate proved so far.

Updates are batched (one small message per ``every`` seconds with the candidates that
changed), and the ``data`` trait holds the final state so a saved notebook still shows it.
"""

from __future__ import annotations

import math
from typing import Any

from . import payload
from .base import Following, Throttle

__all__ = ["OptimiseView", "candidate_payload", "state"]


def _num(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def candidate_payload(opt: Any, c: Any) -> dict[str, Any]:
    """One candidate as the view draws it (its diff against its parent included)."""
    gate = c.gate or {}
    return {
        "id": c.id,
        "parent": c.parent,
        "status": c.status,
        "reason": c.reason,
        "rationale": c.rationale,
        "note": c.note,
        "train_success": _num(c.train_success) if c.successes else None,
        "train_score": _num(c.train_score) if c.scores else None,
        "validation": c.validation,
        "decided_at": c.decided_at,
        "calls": c.calls,
        "verdict": gate.get("verdict"),
        "p": _num(gate.get("p")),
        "diff": opt.diff(c.id) if c.parent else {},
    }


def state(opt: Any) -> dict[str, Any]:
    """Everything the view draws."""
    from ..evals.cost import money

    p, c = opt.proposer_tokens
    return {
        "budget": opt.budget,
        "calls": opt.metric_calls,
        "best": opt.best_id,
        "candidates": [candidate_payload(opt, x) for x in opt.candidates],
        "current": dict(opt.current),
        "done": opt.done,
        "stopped": opt.cancelled,
        "reason": opt.stop_reason,
        "warnings": list(opt.warnings),
        "train": len(opt.train),
        "validation": len(opt.validation),
        "alpha": opt.alpha,
        "gate": opt.gate,
        "proposer": (
            f"{opt.proposer_calls} call{'' if opt.proposer_calls == 1 else 's'}, {p + c} "
            f"token{'' if p + c == 1 else 's'}, {money(opt.proposer_spend)}"
        ),
        "spend": money(opt.spend),
    }


class OptimiseView(Following):
    """The live view of an :class:`~agentnb.evals.Optimisation` (see the module docstring)."""

    def __init__(self, optimisation: Any, *, every: float = 0.25) -> None:
        self.optimisation = optimisation
        self.sent_bytes = 0
        self.updates = 0
        self._changed: dict[str, Any] = {}
        self._throttle = Throttle(every, self.flush)
        super().__init__(kind="optimise", data=state(optimisation))
        self._unsubscribe = optimisation.subscribe(self._on_event)

    def _on_event(self, kind: str, data: Any) -> None:
        if kind == "candidate":
            self._changed[data.id] = data
        if kind == "end":
            self.flush()
        else:
            self._throttle.soon()

    def flush(self) -> None:
        """Send what changed since the last update (at most one per ``every`` seconds)."""
        self._throttle.cancel()
        opt = self.optimisation
        changed, self._changed = self._changed, {}
        # a promotion changes the incumbent; the rest of the header is cheap to send whole
        full = state(opt)
        msg = {
            "op": "update",
            "candidates": [candidate_payload(opt, c) for c in changed.values()],
            **{k: v for k, v in full.items() if k != "candidates"},
        }
        self._post(msg)
        if opt.done:
            self.data = full  # the saved notebook shows the finished run

    def _post(self, msg: dict[str, Any]) -> None:
        self.updates += 1
        msg, n = payload.sendable(msg)
        self.sent_bytes += n
        self.send(msg)

    def _on_msg(self, content: dict[str, Any]) -> Any:
        op = content.get("op")
        if op == "hello":
            self._post({"op": "state", "data": state(self.optimisation)})
            return None
        if op == "stop":
            self.optimisation.cancel()
            return None
        raise ValueError(f"unknown message from the optimiser view: {content!r}")

    def subject(self) -> Any:
        return self.optimisation

    def __repr__(self) -> str:
        return f"<OptimiseView of {self.optimisation!r}>"
