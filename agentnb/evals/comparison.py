"""Paired comparison of two variants: the same tasks, the same seeds, run by run.

Runs pair by (task, repeat), and they share their seed, so a difference between the pair is
the variants' doing. ``wins`` are pairs only ``other`` passed, ``losses`` pairs only
``baseline`` passed, ``ties`` the rest; ``improved`` and ``regressed`` are the tasks where
``other`` passed more (fewer) of the paired repeats.

**The test counts tasks** (``test="tasks"``, the default): each task's repeats become its
pass rate; a task where ``other``'s rate is higher is a win, lower a loss, equal drops out;
the exact two-sided sign test (McNemar's exact binomial, on tasks) asks whether wins and
losses differ more than chance would. Repeats of a task are not independent evidence, so
each task counts once (identical repeats give the verdict one run gives, and it says so:
``repeats_identical``). ``test="pairs"`` (``.using("pairs")``) is exact McNemar over (task,
repeat) pairs, assuming repeats independent (its verdict says so). The interval is a paired
bootstrap, over pairs (or over tasks, repeats averaged). A difference within the baseline's
noise floor is ``underpowered``: no verdict (:mod:`.noise`).

With ``margin`` (``ev.compare(a, b, margin=0.05)``: five points of success rate) it also asks
the questions of a cheaper or faster variant: is ``other`` **no worse** than ``baseline`` by
more than the margin (non-inferiority: a one-sided t-test of the paired differences against
``-margin``), and is it **equivalent** within ``±margin`` (TOST: two one-sided tests, the
larger p-value). The units of those tests are the bootstrap's (pairs, or tasks with their
repeats averaged); when every pair agrees, the exact chance of no disagreement at the margin.
``verdict`` (:mod:`.verdict`) says it in one line, naming the test, and with no evidence, how
many tasks would see ten points (:func:`agentnb.evals.plan`); everything at level ``alpha``.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..display import Shown, escape
from ..errors import ConfigurationError
from . import statistics as st
from .outputs import prompt_diff_html
from .planning import Plan, plan
from .sent import prompt_diff
from .tables import counted
from .verdict import TESTS, identical, method, verdict

if TYPE_CHECKING:
    import pandas as pd

    from .evaluation import Evaluation

__all__ = ["TESTS", "Comparison", "compare"]

#: Fields ``to_frame()`` leaves out: lists, one row cannot hold them.
LISTS = ("improved", "regressed", "flips", "prompt_diff", "differences", "compared")


@dataclass
class Comparison(Shown):
    """What ``ev.compare(baseline, other)`` found (see the module docstring)."""

    baseline: str
    other: str
    pairs: int
    wins: int
    losses: int
    ties: int
    baseline_rate: float
    other_rate: float
    #: The exact McNemar p over (task, repeat) pairs (the test of ``test="pairs"``).
    mcnemar_p: float
    ci_low: float
    ci_high: float
    ci_method: str
    #: Tasks where ``other`` passed more of the paired repeats than ``baseline``, and fewer.
    improved: list[str] = field(default_factory=list)
    regressed: list[str] = field(default_factory=list)
    #: Every discordant pair: (task, repeat, baseline outcome, other outcome).
    flips: list[tuple[str, int, str, str]] = field(default_factory=list)
    #: What changed between the two variants' prompts as their runs sent them (the requests
    #: made, :mod:`agentnb.evals.sent`): ``{"instructions": rows, "tools": {name: rows}}`` of
    #: :func:`agentnb.models.differ.line_diff` (empty when unchanged).
    prompt_diff: dict[str, Any] = field(default_factory=dict)
    #: The level of the tests and of the (1 - alpha) interval; the margin (None: not asked).
    alpha: float = 0.05
    margin: float | None = None
    #: p-values: H0 "other is worse by margin or more"; H0 "not within ±margin" (TOST).
    noninferiority_p: float = st.NAN
    equivalence_p: float = st.NAN
    #: The paired differences the bootstrap and t-tests used (other − baseline, per unit).
    differences: list[float] = field(default_factory=list)
    #: Tasks the pairs cover.
    tasks: int = 0
    #: The test ``significant`` and the verdict read: ``"tasks"`` (the exact sign test over
    #: tasks, each task's repeats as its pass rate) or ``"pairs"`` (exact McNemar over pairs,
    #: assuming repeats independent). See the module docstring.
    test: str = "tasks"
    #: The exact sign test's p over tasks (improved against regressed).
    task_p: float = st.NAN
    #: Paired repeats per task (the most any task has).
    repeats: int = 1
    #: Every task's repeats were identical, outcome and answer, for both variants.
    repeats_identical: bool = False
    #: The tasks the pairs cover, in the task set's order.
    compared: list[str] = field(default_factory=list)
    #: Why the difference is within the baseline's noise floor ("" if not): no verdict then.
    underpowered: str = ""

    @property
    def p(self) -> float:
        """The p-value of the comparison's ``test``: ``task_p`` or ``mcnemar_p``."""
        return self.task_p if self.test == "tasks" else self.mcnemar_p

    @property
    def won(self) -> int:
        """The test's units (tasks, or pairs) that went ``other``'s way."""
        return len(self.improved) if self.test == "tasks" else self.wins

    @property
    def lost(self) -> int:
        """The test's units that went ``baseline``'s way."""
        return len(self.regressed) if self.test == "tasks" else self.losses

    @property
    def units(self) -> int:
        """The test's sample: tasks, or pairs."""
        return self.tasks if self.test == "tasks" else self.pairs

    @property
    def method(self) -> str:
        """The test in words, with its assumption: what the verdict names."""
        return method(self)

    @property
    def discordant(self) -> float:
        """The share of the test's units (tasks, or pairs) that disagree."""
        return (self.won + self.lost) / self.units if self.units else st.NAN

    @property
    def significant(self) -> bool:
        """Whether the comparison's test says the two differ (p < alpha)."""
        return not st.is_nan(self.p) and self.p < self.alpha and self.pairs > 0

    def using(self, test: str) -> Comparison:
        """This comparison read by another test: ``"tasks"`` or ``"pairs"`` (a copy)."""
        if test not in TESTS:
            raise ConfigurationError(f"test must be one of {TESTS}, not {test!r}")
        return dataclasses.replace(self, test=test)

    def plan(self, difference: float = 0.10, power: float = 0.8) -> Plan:
        """What it would take to see ``difference`` with this test: units (tasks, or pairs)
        disagreeing as often as here (at least ``difference``, which a difference needs)."""
        seen = self.discordant if not st.is_nan(self.discordant) else 0.0
        return plan(
            difference,
            power=power,
            alpha=self.alpha,
            discordant=min(1.0, max(seen, abs(difference))),
            tasks=self.tasks or None,
            unit=self.test,
        )

    @property
    def verdict(self) -> str:
        """The comparison in one plain line, naming its test (:mod:`.verdict`)."""
        return verdict(self)

    @property
    def difference(self) -> float:
        """other's success rate minus baseline's, over the paired runs."""
        return self.other_rate - self.baseline_rate

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        row = {k: v for k, v in row.items() if k not in LISTS}
        row.update(p=self.p, difference=self.difference, verdict=self.verdict)
        return pd.DataFrame([row])

    def __repr__(self) -> str:
        return (
            f"<Comparison {self.baseline} vs {self.other}: {self.tasks} tasks, "
            f"{self.pairs} pairs, {self.other} {self.wins} wins / {self.losses} losses / "
            f"{self.ties} ties; difference {self.difference:+.3f} [{self.ci_low:+.3f}, "
            f"{self.ci_high:+.3f}], p = {self.p:.4g} ({self.method}); {self.verdict}>"
        )

    def static_html(self) -> str:
        """The verdict, the pairs, every flip and the prompt diff, escaped."""
        e = escape
        flips = "".join(
            f"<tr><td>{e(t)}</td><td>{r}</td><td>{e(a)}</td><td>{e(b)}</td></tr>"
            for t, r, a, b in self.flips
        )
        return (
            f"<div class='agentnb-compare'><p><b>{e(self.verdict)}</b></p><p><b>"
            f"{e(self.baseline)}</b> vs <b>{e(self.other)}</b>: {self.tasks} tasks, "
            f"{self.pairs} pairs — {e(self.other)} {self.wins} wins, {self.losses} losses, "
            f"{self.ties} ties (better on {len(self.improved)} tasks, worse on "
            f"{len(self.regressed)}). Difference in success rate {self.difference:+.1%} "
            f"({1 - self.alpha:.0%} CI "
            f"{self.ci_low:+.1%} to {self.ci_high:+.1%}, {e(self.ci_method)}); p = "
            f"{self.p:.4g}, {e(self.method)}.</p><table><tr><th>task</th><th>repeat</th>"
            f"<th>{e(self.baseline)}</th><th>{e(self.other)}</th></tr>{flips}</table>"
            f"{prompt_diff_html(self.prompt_diff)}</div>"
        )


def compare(
    ev: Evaluation,
    baseline: str,
    other: str,
    *,
    margin: float | None = None,
    alpha: float = 0.05,
    test: str = "tasks",
) -> Comparison:
    """``ev.compare(baseline, other)``; ``test="pairs"`` reads it by the per-pair McNemar
    test instead of the test over tasks (see the module docstring)."""
    if not 0 < alpha < 1:
        raise ConfigurationError(f"alpha must be between 0 and 1, not {alpha!r}")
    if margin is not None and not 0 < margin < 1:
        raise ConfigurationError(f"margin must be a share between 0 and 1, not {margin!r}")
    if test not in TESTS:
        raise ConfigurationError(f"test must be one of {TESTS}, not {test!r}")
    for name in (baseline, other):
        if name not in ev.variants:
            raise KeyError(f"no variant {name!r}; variants: {ev.variants}")
    by_key = {r.key: r for r in ev.records}
    pairs = []
    for (variant, task, repeat), a in by_key.items():
        b = by_key.get((other, task, repeat))
        if variant == baseline and b is not None and counted(ev, a) and counted(ev, b):
            pairs.append((a, b))
    order = {t: i for i, t in enumerate(ev.tasks.names)}
    pairs.sort(key=lambda p: (order.get(p[0].task, 0), p[0].repeat))
    wins = sum(b.passed and not a.passed for a, b in pairs)
    losses = sum(a.passed and not b.passed for a, b in pairs)
    per_task: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for a, b in pairs:
        per_task[a.task].append((float(a.passed), float(b.passed)))
    if ev.repeats > 1:
        xs = [sum(x for x, _ in v) / len(v) for v in per_task.values()]
        ys = [sum(y for _, y in v) / len(v) for v in per_task.values()]
        method = "paired bootstrap over tasks (repeats averaged per task)"
    else:
        xs = [float(a.passed) for a, _ in pairs]
        ys = [float(b.passed) for _, b in pairs]
        method = "paired bootstrap over pairs"
    low, high = st.paired_bootstrap(xs, ys, seed=ev.seed, confidence=1 - alpha)
    diffs = [y - x for x, y in zip(xs, ys, strict=True)]
    lower, _, both = st.tost(diffs, margin) if margin else (st.NAN, st.NAN, st.NAN)
    improved = [t for t, v in per_task.items() if sum(y - x for x, y in v) > 0]
    regressed = [t for t, v in per_task.items() if sum(y - x for x, y in v) < 0]
    n = len(pairs)
    return Comparison(
        baseline,
        other,
        n,
        wins,
        losses,
        n - wins - losses,
        sum(a.passed for a, _ in pairs) / n if n else st.NAN,
        sum(b.passed for _, b in pairs) / n if n else st.NAN,
        st.mcnemar_p(wins, losses),
        low,
        high,
        method,
        improved=improved,
        regressed=regressed,
        flips=[(a.task, a.repeat, a.outcome, b.outcome) for a, b in pairs if a.passed != b.passed],
        prompt_diff=prompt_diff(ev, baseline, other),
        alpha=alpha,
        margin=margin,
        noninferiority_p=lower,
        equivalence_p=both,
        differences=diffs,
        tasks=len(per_task),
        test=test,
        task_p=st.mcnemar_p(len(improved), len(regressed)),  # the exact sign test, on tasks
        repeats=max((len(v) for v in per_task.values()), default=1),
        repeats_identical=identical(pairs),
        compared=list(per_task),
    )
