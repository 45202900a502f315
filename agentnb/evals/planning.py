"""``an.evals.plan``: how many tasks × repeats a paired comparison needs to see a difference.

    an.evals.plan(0.10, baseline=0.6, tasks=39)          # 10 points up from 60 %, 39 tasks
    an.evals.plan(0.10, discordant=0.25)                  # pairs that disagree 25 % of the time
    ev.compare("a", "b").plan(0.10)                       # the disagreement this sweep showed

The comparison it plans for is the one ``ev.compare`` and the optimiser's gate make: runs
paired by (task, repeat), the exact two-sided McNemar test at ``alpha``. Its power depends
on the difference and on how often the two variants' runs disagree (the discordant pairs:
only they carry information). Give that share (``discordant=``), or a baseline success rate
(``baseline=``: the two variants' runs are then assumed independent given the rates, which
makes them disagree most — a cautious plan), or plan from a comparison you already have.
The power is exact (:func:`agentnb.evals.statistics.mcnemar_power`, sums of scipy's binomial
distribution), not a normal approximation.

Repeats of one task are not independent pairs: the same task tends to pass or fail the same
way. The plan counts pairs; with ``tasks`` it says how many repeats of those tasks give that
many pairs, and says when more tasks would be the better buy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ConfigurationError
from . import statistics as st

__all__ = ["Plan", "fewest_flips", "plan"]


def fewest_flips(alpha: float) -> int:
    """The fewest disagreeing pairs with which the exact McNemar test can tell two variants
    apart at all: all of them one way gives p = 2 · 0.5ⁿ, so the smallest n below ``alpha``
    (6 at α = 0.05: five wins and no loss give p = 0.0625)."""
    n = 1
    while 2 * 0.5**n >= alpha:
        n += 1
    return n


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` found: ``pairs`` needed (and ``repeats`` of ``tasks`` tasks)."""

    difference: float
    power: float
    alpha: float
    discordant: float
    assumption: str
    pairs: int
    achieved_power: float
    tasks: int | None = None

    @property
    def repeats(self) -> int | None:
        """Repeats of ``tasks`` tasks that make ``pairs`` pairs (None without tasks)."""
        return None if not self.tasks else math.ceil(self.pairs / self.tasks)

    @property
    def verdict(self) -> str:
        """The plan in one line."""
        points = f"{abs(self.difference) * 100:g} points"
        head = (
            f"to see {points} with {self.power:.0%} power at α = {self.alpha:g} (exact McNemar, "
            f"pairs disagreeing {self.discordant:.0%} of the time, {self.assumption}): "
            f"{self.pairs} pairs"
        )
        if not self.tasks:
            return head
        more = " (more tasks would be better than repeats)" if (self.repeats or 0) > 1 else ""
        return f"{head}; with {self.tasks} tasks, {self.repeats} repeats{more}"

    def after(self, pairs: int) -> str:
        """What ``pairs`` pairs that showed no difference still lack (a comparison's verdict
        ends with it): more repeats, or that they had the power, so the difference is smaller."""
        points = f"{abs(self.difference) * 100:g} points"
        if self.pairs <= pairs:
            return f"; {pairs} pairs were enough to see {points}, so it is likely smaller"
        if self.repeats is None:
            return f"; you would need about {self.pairs} pairs to see {points}"
        return f"; with these tasks you would need about {self.repeats} repeats to see {points}"

    def __repr__(self) -> str:
        return f"<Plan {self.verdict}>"


def plan(
    difference: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    discordant: float | None = None,
    baseline: float | None = None,
    tasks: int | None = None,
) -> Plan:
    """The pairs (and repeats of ``tasks`` tasks) a paired comparison needs to see
    ``difference`` (0.10 = ten points of success rate) with ``power`` at ``alpha``.

    Say how often pairs disagree: ``discordant`` (a share of pairs), or ``baseline`` (the
    baseline's success rate; the other is ``baseline + difference``, runs assumed independent
    given their rates: ``p0·(1−p1) + p1·(1−p0)``). See the module docstring."""
    numeric = isinstance(difference, int | float) and not isinstance(difference, bool)
    if not numeric or not 0 < abs(difference) <= 1:
        raise ConfigurationError(
            "difference must be a change of success rate between -1 and 1 other than 0 (0.10 = ten "
            f"points), not {difference!r}"
        )
    if discordant is None and baseline is None:
        raise ConfigurationError(
            "say how often the two variants' runs disagree: discordant=0.25 (a share of "
            "pairs), or baseline=0.6 (the baseline's success rate), or plan from a comparison: "
            "ev.compare(a, b).plan(difference)"
        )
    if discordant is not None:
        assumption = "as given"
        pd = float(discordant)
    else:
        p0 = float(baseline)  # type: ignore[arg-type]
        p1 = p0 + difference
        if not 0 <= p0 <= 1 or not 0 <= p1 <= 1:
            raise ConfigurationError(
                f"baseline {p0:g} + difference {difference:+g} is not a success rate"
            )
        pd = p0 * (1 - p1) + p1 * (1 - p0)
        assumption = f"independent runs at {p0:.0%} and {p1:.0%}"
    if not abs(difference) <= pd <= 1:
        raise ConfigurationError(
            f"to differ by {abs(difference):g}, at least that share of pairs must disagree "
            f"(discordant={pd:g})"
        )
    if tasks is not None and tasks < 1:
        raise ConfigurationError("tasks must be at least 1")
    try:
        pairs, achieved = st.pairs_needed(difference, pd, power, alpha)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None
    return Plan(difference, power, alpha, pd, assumption, pairs, achieved, tasks)
