"""Paired comparison of two variants: the same tasks, the same seeds, run by run.

Runs pair by (task, repeat), and they share their seed, so a difference between the pair is
the variants' doing. ``wins`` are pairs only ``other`` passed, ``losses`` pairs only
``baseline`` passed, ``ties`` the rest; the exact two-sided McNemar test asks whether wins
and losses differ more than chance would make them (the concordant pairs carry no
information about that). The 95% interval of the difference in success rate is a paired
bootstrap: over pairs when each task ran once, over tasks (each task's paired repeats
averaged, resampled whole) when tasks repeat. Unpaired tests are the wrong tool here: they
ignore that both variants ran on the same tasks.

With ``margin`` (``ev.compare(a, b, margin=0.05)``: five points of success rate) it also asks
the questions of a cheaper or faster variant: is ``other`` **no worse** than ``baseline`` by
more than the margin (non-inferiority: a one-sided t-test of the paired differences against
``-margin``), and is it **equivalent** within ``±margin`` (TOST: two one-sided tests, the
larger p-value). The units of those tests are the bootstrap's (pairs, or tasks with their
repeats averaged); when every pair agrees, the exact chance of no disagreement at the margin.
``verdict`` says it all in one plain line, and when there is no evidence
either way it says how many repeats would see ten points (:func:`agentnb.evals.plan`, from
the disagreement this comparison saw). Everything is at the level ``alpha`` (0.05).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._html import escape
from ..display import Shown
from ..errors import ConfigurationError
from ..models.differ import line_diff
from . import statistics as st
from .outputs import prompt_diff_html
from .planning import Plan, fewest_flips, plan
from .tables import counted

if TYPE_CHECKING:
    import pandas as pd

    from .evaluation import Evaluation

__all__ = ["Comparison", "compare"]


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
    mcnemar_p: float
    ci_low: float
    ci_high: float
    ci_method: str
    #: Tasks where ``other`` passed more of the paired repeats than ``baseline``, and fewer.
    improved: list[str] = field(default_factory=list)
    regressed: list[str] = field(default_factory=list)
    #: Every discordant pair: (task, repeat, baseline outcome, other outcome).
    flips: list[tuple[str, int, str, str]] = field(default_factory=list)
    #: What changed between the two variants' prompts: ``{"instructions": rows, "tools":
    #: {name: rows}}`` of :func:`agentnb.models.differ.line_diff` (empty when unchanged).
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

    @property
    def discordant(self) -> float:
        """The share of pairs that disagree."""
        return (self.wins + self.losses) / self.pairs if self.pairs else st.NAN

    @property
    def significant(self) -> bool:
        """Whether McNemar's exact test says the two differ (p < alpha)."""
        return not st.is_nan(self.mcnemar_p) and self.mcnemar_p < self.alpha and self.pairs > 0

    def plan(self, difference: float = 0.10, power: float = 0.8) -> Plan:
        """What it would take to see ``difference`` with these tasks: pairs disagreeing as
        often as here (at least ``difference``, which a difference needs)."""
        seen = self.discordant if not st.is_nan(self.discordant) else 0.0
        return plan(
            difference,
            power=power,
            alpha=self.alpha,
            discordant=min(1.0, max(seen, abs(difference))),
            tasks=self.tasks or None,
        )

    @property
    def verdict(self) -> str:
        """The comparison in one plain line."""
        a, b = self.baseline, self.other
        if not self.pairs:
            return f"no paired runs of {b} and {a} to compare"
        t, w, lo = self.tasks, len(self.improved), len(self.regressed)
        p = f"p = {self.mcnemar_p:.2g}"
        real = f"the difference is real ({p})"
        if self.significant and self.wins > self.losses:
            line = f"{b} is better than {a} on {w} of {t} tasks, worse on {lo}; {real}"
        elif self.significant:
            line = f"{b} is worse than {a} on {lo} of {t} tasks, better on {w}; {real}"
        else:  # and what more would take, or why more of the same would not help
            line = (
                f"no evidence of a difference ({b} better on {w} of {t} tasks, worse on {lo}; {p})"
            )
            flips, need = self.wins + self.losses, fewest_flips(self.alpha)
            if not flips:
                line += "; every pair agreed: these tasks do not tell them apart"
            elif not (self.wins and self.losses) and flips < need:
                line += f"; all {flips} flips went one way, but the exact test needs {need} to tell"
            else:
                with contextlib.suppress(ConfigurationError):
                    line += self.plan(self.margin or 0.10).after(self.pairs)
        return line + self._margin_verdict()

    def _margin_verdict(self) -> str:
        if not self.margin:
            return ""
        m = f"{self.margin * 100:g} points"
        if st.is_nan(self.noninferiority_p):
            return (
                f"; all {self.pairs} pairs differ alike, so the ±{m} margin cannot be tested "
                "(a t-test needs some spread)"
            )
        if all(d == 0 for d in self.differences):
            how = f"no pair disagreed: (1 − {self.margin:g})^{len(self.differences)}"
            if self.equivalence_p < self.alpha:
                return f"; equivalent within ±{m} ({how} = {self.equivalence_p:.2g})"
            return (
                f"; too few pairs to call it equivalent within ±{m} ({how} = "
                f"{self.equivalence_p:.2g})"
            )
        if self.equivalence_p < self.alpha:
            return f"; equivalent within ±{m} (TOST p = {self.equivalence_p:.2g})"
        if self.noninferiority_p < self.alpha:
            return (
                f"; no worse than {self.baseline} by {m} or more (non-inferiority p = "
                f"{self.noninferiority_p:.2g})"
            )
        return (
            f"; cannot rule out that it is worse by {m} or more (non-inferiority p = "
            f"{self.noninferiority_p:.2g})"
        )

    @property
    def difference(self) -> float:
        """other's success rate minus baseline's, over the paired runs."""
        return self.other_rate - self.baseline_rate

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        row = {
            k: getattr(self, k)
            for k in (
                "baseline",
                "other",
                "pairs",
                "wins",
                "losses",
                "ties",
                "baseline_rate",
                "other_rate",
                "mcnemar_p",
                "ci_low",
                "ci_high",
                "ci_method",
                "alpha",
                "margin",
                "noninferiority_p",
                "equivalence_p",
            )
        }
        row["difference"] = self.difference
        row["verdict"] = self.verdict
        return pd.DataFrame([row])

    def __repr__(self) -> str:
        return (
            f"<Comparison {self.baseline} vs {self.other}: {self.pairs} pairs, {self.other} "
            f"{self.wins} wins / {self.losses} losses / {self.ties} ties; difference "
            f"{self.difference:+.3f} [{self.ci_low:+.3f}, {self.ci_high:+.3f}], "
            f"McNemar p = {self.mcnemar_p:.4g}; {self.verdict}>"
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
            f"{e(self.baseline)}</b> vs <b>{e(self.other)}</b>: {self.pairs} pairs — "
            f"{e(self.other)} {self.wins} wins, {self.losses} losses, {self.ties} ties. Difference "
            f"in success rate {self.difference:+.1%} ({1 - self.alpha:.0%} CI {self.ci_low:+.1%} "
            f"to {self.ci_high:+.1%}, {e(self.ci_method)}); exact McNemar "
            f"p = {self.mcnemar_p:.4g}.</p><table><tr><th>task</th><th>repeat</th>"
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
) -> Comparison:
    if not 0 < alpha < 1:
        raise ConfigurationError(f"alpha must be between 0 and 1, not {alpha!r}")
    if margin is not None and not 0 < margin < 1:
        raise ConfigurationError(f"margin must be a share between 0 and 1, not {margin!r}")
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
        improved=[t for t, v in per_task.items() if sum(y - x for x, y in v) > 0],
        regressed=[t for t, v in per_task.items() if sum(y - x for x, y in v) < 0],
        flips=[(a.task, a.repeat, a.outcome, b.outcome) for a, b in pairs if a.passed != b.passed],
        prompt_diff=prompt_diff(ev.descriptions.get(baseline), ev.descriptions.get(other)),
        alpha=alpha,
        margin=margin,
        noninferiority_p=lower,
        equivalence_p=both,
        differences=diffs,
        tasks=len(per_task),
    )


def prompt_diff(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    """The line diffs of two variants' instructions and tool descriptions (what
    :func:`agentnb.evals.tables.describe` kept of each)."""
    if not a or not b:
        return {}
    out: dict[str, Any] = {}
    instructions = line_diff(a.get("instructions"), b.get("instructions"))
    if instructions:
        out["instructions"] = instructions
    ta, tb = a.get("tools") or {}, b.get("tools") or {}
    tools = {n: line_diff(ta.get(n), tb.get(n)) for n in dict.fromkeys([*ta, *tb])}
    tools = {n: rows for n, rows in tools.items() if rows}
    if tools:
        out["tools"] = tools
    return out
