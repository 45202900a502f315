"""A check on the answer's format: structured output (``Agent(output_type=...)``, 002 §5.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...models import OutputType
from .base import Check, Evidence

__all__ = ["OutputValid", "output_valid"]


@dataclass(frozen=True, repr=False)
class OutputValid(Check):
    """The final answer is valid (see :func:`output_valid`)."""

    kind: ClassVar[str] = "output_valid"
    schema: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        if self.schema is None:
            return "output_valid()"
        return f"output_valid({self.schema.get('title') or 'schema'})"

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        result = evidence.result
        if self.schema is not None:
            check = OutputType(self.schema).check(evidence.output)
            return check.valid, "" if check.valid else f"the answer is not valid: {check.error}"
        if result.stop_reason == "invalid_output":
            return False, f"stopped with invalid_output ({result.stop_detail})"
        if getattr(result, "value", None) is not None:
            return True, ""
        return False, (
            "the run has no validated value: its agent has no output_type (give one: "
            "output_valid(Itinerary)), or it stopped before a final answer "
            f"({result.stop_reason})"
        )


def output_valid(output_type: Any = None) -> OutputValid:
    """The run's final answer is valid structured output.

    Without an argument: the run's agent had an ``output_type`` and the answer passed it
    (``result.value`` is set; a run that stopped with ``invalid_output`` fails). With a type
    (a pydantic model, a ``TypedDict``, a JSON schema dict): the answer's text is validated
    against its JSON schema here, whatever the agent asked for — a variant in JSON mode and
    one with ``output_type`` judged alike. The check keeps the schema (it saves as JSON).
    """
    if output_type is None:
        return OutputValid()
    schema = output_type if isinstance(output_type, dict) else OutputType(output_type).spec
    return OutputValid(schema if isinstance(schema, dict) else schema.original)
