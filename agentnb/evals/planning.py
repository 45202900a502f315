"""``an.evals.plan``: how many tasks a paired comparison needs to see a difference.

    an.evals.plan(0.10, baseline=0.6, tasks=39)          # 10 points up from 60 %, 39 tasks
    an.evals.plan(0.10, discordant=0.25)                  # tasks that disagree 25 % of the time
    ev.compare("a", "b").plan(0.10)                       # the disagreement this sweep showed

The comparison it plans for is the one ``ev.compare`` and the gates make by default: the
exact two-sided test over tasks (each task's repeats as its pass rate, :mod:`.verdict`) at
``alpha``. Its power depends on the difference and on how often the two variants disagree on
a task (only those tasks carry information). Give that share (``discordant=``), or a
baseline success rate (``baseline=``: the two variants' runs are then assumed independent
given the rates, which makes them disagree most — a cautious plan), or plan from a comparison
you already have. The power is exact (:func:`agentnb.evals.statistics.mcnemar_power`, sums of
scipy's binomial distribution), not a normal approximation.

The plan counts **tasks**: repeats of a task are not new tasks (the same task tends to pass
or fail the same way; a deterministic model repeats itself exactly), and the test counts each
task once. With ``tasks`` it says how many more tasks you would need. ``unit="pairs"`` plans
for the per-pair McNemar test instead (``ev.compare(...).using("pairs")``), which assumes the
repeats of a task independent: it counts pairs, and says how many repeats make them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from . import statistics as st

__all__ = ["Plan", "fewest_flips", "plan"]


def fewest_flips(alpha: float) -> int:
    """The fewest disagreeing units (tasks, or pairs) with which the exact test can tell two
    variants apart at all: all of them one way gives p = 2 · 0.5ⁿ, so the smallest n below
    ``alpha`` (6 at α = 0.05: five wins and no loss give p = 0.0625)."""
    n = 1
    while 2 * 0.5**n >= alpha:
        n += 1
    return n


@dataclass(frozen=True)
class Plan:
    """What :func:`plan` found: the tasks (or pairs) needed, against the ``tasks`` you have."""

    difference: float
    power: float
    alpha: float
    discordant: float
    assumption: str
    #: The paired units the exact test needs: tasks (``unit="tasks"``), or pairs.
    needed: int
    achieved_power: float
    tasks: int | None = None
    unit: str = "tasks"
    #: The share of tasks the baseline disagrees with itself on (``noise=``), or None.
    floor: float | None = None

    @property
    def within_noise(self) -> bool:
        """The difference is no bigger than the baseline's own disagreement: a gate with that
        noise floor refuses it however many tasks there are (:mod:`agentnb.evals.noise`)."""
        return self.floor is not None and abs(self.difference) <= self.floor

    @property
    def pairs(self) -> int:
        """The paired units needed (``needed``; each task once, for the test over tasks)."""
        return self.needed

    @property
    def more_tasks(self) -> int | None:
        """Tasks to add to the ``tasks`` you have (test over tasks; None without tasks)."""
        if not self.tasks or self.unit != "tasks":
            return None
        return max(0, self.needed - self.tasks)

    @property
    def repeats(self) -> int | None:
        """Repeats of ``tasks`` tasks that make ``needed`` pairs, for the per-pair test (it
        assumes them independent); None for the test over tasks, where repeats add nothing."""
        if not self.tasks or self.unit != "pairs":
            return None
        return math.ceil(self.needed / self.tasks)

    @property
    def verdict(self) -> str:
        """The plan in one line."""
        if self.within_noise:
            return (
                f"{self._verdict()}; but the baseline disagrees with itself on "
                f"{self.floor:.0%} of tasks (A/A): a difference of "
                f"{abs(self.difference) * 100:g} points is within that noise, and a gate with "
                "that floor refuses it however many tasks you add: make the runs steadier (a "
                "seed, temperature 0) or look for a bigger difference"
            )
        return self._verdict()

    def _verdict(self) -> str:
        points = f"{abs(self.difference) * 100:g} points"
        unit = "task" if self.unit == "tasks" else "pair"
        test = "exact test over tasks" if self.unit == "tasks" else "exact McNemar over pairs"
        head = (
            f"to see {points} with {self.power:.0%} power at α = {self.alpha:g} ({test}, "
            f"{unit}s disagreeing {self.discordant:.0%} of the time, {self.assumption}): "
            f"{self.needed} {unit}s"
        )
        if not self.tasks:
            return head
        if self.unit == "pairs":
            more = " (more tasks would be better than repeats)" if (self.repeats or 0) > 1 else ""
            return (
                f"{head}; with {self.tasks} tasks, {self.repeats} repeats, if repeats were "
                f"independent{more}"
            )
        if not self.more_tasks:
            return f"{head}; your {self.tasks} tasks are enough"
        return (
            f"{head}; you have {self.tasks}: about {self.more_tasks} more (repeats of the same "
            "tasks do not count as tasks)"
        )

    def after(self, units: int) -> str:
        """What ``units`` tasks (or pairs) that showed no difference still lack (a
        comparison's verdict ends with it): more tasks, or that they had the power, so the
        difference is smaller."""
        points = f"{abs(self.difference) * 100:g} points"
        unit = "task" if self.unit == "tasks" else "pair"
        if self.needed <= units:
            return f"; {units} {unit}s were enough to see {points}, so it is likely smaller"
        if self.unit == "tasks":
            return (
                f"; you would need about {self.needed} tasks to see {points} (these are "
                f"{units}: add tasks, not repeats)"
            )
        if self.repeats is None:
            return f"; you would need about {self.needed} pairs to see {points}"
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
    unit: str = "tasks",
    noise: Any = None,
) -> Plan:
    """The tasks a paired comparison needs to see ``difference`` (0.10 = ten points of
    success rate) with ``power`` at ``alpha``, and how many more than the ``tasks`` you have.

    Say how often tasks disagree: ``discordant`` (a share of tasks), or ``baseline`` (the
    baseline's success rate; the other is ``baseline + difference``, runs assumed independent
    given their rates: ``p0·(1−p1) + p1·(1−p0)``). ``unit="pairs"``: for the per-pair McNemar
    test (it assumes repeats independent). ``noise``: the baseline's noise floor
    (:func:`agentnb.evals.noise`, or the share of tasks it disagrees with itself on): its
    disagreement is counted in (tasks disagree at least that much more often), and a
    difference within it is said to be out of any gate's reach. See the module docstring."""
    floor = None
    if noise is not None:
        floor = float(getattr(noise, "share", noise))
        if not 0 <= floor <= 1:
            raise ConfigurationError(f"noise is a floor or a share of tasks, not {noise!r}")
        if discordant is None and baseline is None:
            discordant = min(1.0, floor + abs(difference))
    if unit not in ("tasks", "pairs"):
        raise ConfigurationError(f"unit must be 'tasks' or 'pairs', not {unit!r}")
    numeric = isinstance(difference, int | float) and not isinstance(difference, bool)
    if not numeric or not 0 < abs(difference) <= 1:
        raise ConfigurationError(
            "difference must be a change of success rate between -1 and 1 other than 0 (0.10 = ten "
            f"points), not {difference!r}"
        )
    if discordant is None and baseline is None:
        raise ConfigurationError(
            "say how often the two variants disagree on a task: discordant=0.25 (a share of "
            "tasks), or baseline=0.6 (the baseline's success rate), or plan from a comparison: "
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
    if floor is not None and discordant is not None and assumption == "as given":
        assumption = "the baseline's noise floor plus the difference"
    return Plan(difference, power, alpha, pd, assumption, pairs, achieved, tasks, unit, floor)
