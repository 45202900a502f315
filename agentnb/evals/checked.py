"""What an evaluation found out about a run: its checks, as an annotation on its record.

A run's record (``session.runs``) holds what the run did; once its task's checks have read
it, :func:`annotate` adds what they found, as ``record.annotations["checks"]``: a
:class:`Checked` with each check's result, the error that kept the run or a check from
answering (a timeout, an exception), and the outcome they give. It is written once per run,
here and nowhere else (as ``ToolFinished`` tells a call's outcome), and every table of an
evaluation reads the outcome from it.

* ``pass``: every check passed; ``fail``: some check failed;
* ``error``: the run or a check raised or timed out (a model or HTTP failure, a broken
  check): not the agent's answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConfigurationError
from ..session import RunRecord
from .checks.base import CheckResult

__all__ = ["KEY", "OUTCOMES", "Checked", "annotate", "checked"]

OUTCOMES = ("pass", "fail", "error")
#: Where the annotation lives in ``record.annotations``.
KEY = "checks"

Outcome = Literal["pass", "fail", "error"]


@dataclass(frozen=True, slots=True)
class Checked:
    """A run's checks: the ``outcome``, each check's result in the task's order, and the
    ``error`` ("" when none) that made the outcome ``error``."""

    outcome: Outcome
    checks: tuple[CheckResult, ...] = ()
    error: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ConfigurationError(f"an outcome is one of {OUTCOMES}, not {self.outcome!r}")

    @classmethod
    def of(cls, checks: Iterable[CheckResult], error: str = "") -> Checked:
        """The outcome these results give: ``error`` when there is one, else ``pass`` when
        every check passed (none is a pass), else ``fail``."""
        results = tuple(checks)
        outcome: Outcome = "error" if error else "pass"
        if not error and not all(c.passed for c in results):
            outcome = "fail"
        return cls(outcome, results, error)

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "checks": [list(c) for c in self.checks],
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Checked:
        try:
            checks = tuple(CheckResult(str(n), bool(p), str(r)) for n, p, r in data["checks"])
            return cls(data["outcome"], checks, str(data.get("error") or ""))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"not a run's checks ({type(exc).__name__}: {exc})") from None


def annotate(record: RunRecord, found: Checked | Mapping[str, Any]) -> Checked:
    """Say what the checks found about the run of ``record`` (a :class:`Checked`, or its
    dict read back from a file): the one place the annotation is written."""
    value = found if isinstance(found, Checked) else Checked.from_dict(found)
    if record.annotations is None:
        record.annotations = {}
    record.annotations[KEY] = value
    return value


def checked(record: RunRecord) -> Checked | None:
    """What the checks found about the run of ``record`` (None: not checked)."""
    annotations = record.annotations
    found = annotations.get(KEY) if annotations is not None else None
    return found if isinstance(found, Checked) else None
