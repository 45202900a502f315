"""EvalRecord: what one run of an evaluation did — its outcome, checks and metrics."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .checks.base import CheckResult
from .cost import PRICES, PriceTable

__all__ = ["OUTCOMES", "EvalRecord"]

#: ``pass``: every check passed; ``fail``: some check failed; ``error``: the run or a check
#: raised (a model or HTTP failure, a timeout, a broken check): not the agent's answer.
OUTCOMES = ("pass", "fail", "error")


@dataclass(slots=True)
class EvalRecord:
    """One finished run of an evaluation: one (variant, task, repeat).

    ``steps`` counts replies that called tools (reply batches), ``model_calls`` every model
    call of the run (the final answer included), ``tool_errors`` tool results that were
    errors of any kind. ``tokens`` and ``latency`` (seconds) cover the task's last turn.
    ``divergence`` says where a replaying variant left its recording ("" when it did not).

    Money (see :mod:`agentnb.evals.cost`): ``model`` is the model's name, ``prompt_tokens``
    and ``completion_tokens`` what the run really sent and received over every model call of
    every turn (cache hits are free and left out; a run that errored keeps what it spent
    before), ``unmetered`` the calls whose reply gave no usage. :meth:`cost` prices them
    with the price table as it is when asked.
    """

    variant: str
    task: str
    repeat: int
    outcome: Literal["pass", "fail", "error"]
    checks: list[CheckResult] = field(default_factory=list)
    stop_reason: str | None = None
    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    tokens: int = 0
    latency: float = 0.0
    seed: int = 0
    error: str = ""
    output: str | None = None
    divergence: str = ""
    cached_calls: int = 0
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unmetered: int = 0

    def cost(self, prices: PriceTable | None = None) -> float | None:
        """What this run spent in USD at ``prices`` (``an.evals.prices`` by default); None
        when the model's price is unknown (or some call's tokens are, at a price above 0)."""
        price = (prices or PRICES).lookup(self.model)
        if price is None or (self.unmetered and (price.input or price.output)):
            return None
        return price.cost(self.prompt_tokens, self.completion_tokens)

    @property
    def key(self) -> tuple[str, str, int]:
        return self.variant, self.task, self.repeat

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def failed_checks(self) -> list[CheckResult]:
        """The checks that failed, with their reasons."""
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["checks"] = [list(c) for c in self.checks]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalRecord:
        fields = dict(data)
        fields["checks"] = [CheckResult(*c) for c in fields.get("checks") or ()]
        return cls(**fields)

    def __repr__(self) -> str:
        why = "; ".join(f"{c.name}: {c.reason}" for c in self.failed_checks) or self.error
        return (
            f"<EvalRecord {self.variant}/{self.task}#{self.repeat} {self.outcome}"
            f"{' — ' + why[:100] if why else ''}>"
        )
