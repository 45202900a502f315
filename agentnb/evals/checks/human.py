"""human(): a person's label on the run, as a check like any other (see :mod:`..labels`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...errors import ConfigurationError
from .base import Check, Evidence

__all__ = ["Human", "human"]


@dataclass(frozen=True, repr=False)
class Human(Check):
    """Passes when ``rater`` labelled the run ``pass`` (see :func:`human`)."""

    kind: ClassVar[str] = "human"
    rater: str = "human"

    @property
    def name(self) -> str:
        return "human()" if self.rater == "human" else f"human({self.rater!r})"

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        from ..labels import labels

        found = labels(evidence.result.record).get(self.rater)
        if found is None:  # no label is no verdict: the run is an error, not a failure
            raise ConfigurationError(
                f"{self.name}: nobody labelled this run as {self.rater!r}; label it "
                "(ev.label(...), or the output grid), or leave this check out"
            )
        return found.passed, found.note


def human(rater: str = "human") -> Human:
    """The label ``rater`` gave the run, as a check: ``pass`` passes, ``fail`` fails with
    the note as its reason; a run nobody labelled is an ``error`` (no verdict). Use it to
    rescore labelled runs (``ev.rescore(checks=[an.checks.human()])``); labels come from
    ``ev.label(...)`` or the output grid."""
    if not isinstance(rater, str) or not rater.strip():
        raise ConfigurationError(f"a rater is a non-empty name, not {rater!r}")
    return Human(rater)
