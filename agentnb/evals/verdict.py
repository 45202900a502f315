"""How a paired comparison reads: its test (over tasks, or over pairs) and its plain verdict.

Two tests read the same paired runs (:mod:`.comparison`):

* ``"tasks"`` (the default of ``ev.compare``, ``python -m agentnb eval``,
  :func:`agentnb.testing.assert_no_regression` and the optimiser's gate): each task's
  repeats become its pass rate, and the exact sign test asks whether the tasks ``other``
  improved outnumber those it regressed more than chance would make them. A task counts
  once however often it ran, so identical repeats (a deterministic model) give the verdict
  one run gives;
* ``"pairs"``: the exact McNemar test over (task, repeat) pairs. It assumes the repeats of a
  task independent (a model sampled at a temperature); its verdict states the assumption,
  and says when the repeats were identical, so it counted each task several times.

The verdict names the test, says when every task's repeats were identical, and, when there
is no evidence either way, what more would take (:mod:`.planning`).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from .planning import fewest_flips

if TYPE_CHECKING:
    from .comparison import Comparison

__all__ = ["TESTS", "identical", "method", "verdict"]

#: The tests a comparison (and a gate) reads its pairs by.
TESTS = ("tasks", "pairs")


def identical(pairs: list[tuple[Any, Any]]) -> bool:
    """Whether every task ran more than once and each variant's repeats of it were the same
    run, outcome and answer: a deterministic model, whose repeats are no new evidence."""
    seen: dict[tuple[str, int], set[tuple[str, str | None]]] = defaultdict(set)
    runs: dict[str, int] = defaultdict(int)
    for a, b in pairs:
        runs[a.task] += 1
        for side, r in enumerate((a, b)):
            seen[(r.task, side)].add((r.outcome, r.output))
    return bool(runs) and min(runs.values()) > 1 and all(len(v) == 1 for v in seen.values())


def method(c: Comparison) -> str:
    """The test in words, with what it assumes."""
    if c.test == "tasks":
        if c.repeats > 1:
            return (
                f"exact test over {c.tasks} tasks, each task's {c.repeats} repeats as its pass rate"
            )
        return f"exact test over {c.tasks} tasks"
    if c.repeats > 1:
        return (
            f"exact McNemar over {c.pairs} pairs, assuming the {c.repeats} repeats of a task "
            "independent"
        )
    return f"exact McNemar over {c.pairs} pairs"


def verdict(c: Comparison) -> str:
    """The comparison in one plain line."""
    a, b = c.baseline, c.other
    if not c.pairs:
        return f"no paired runs of {b} and {a} to compare"
    if c.underpowered:  # the gate refuses a verdict within the baseline's own noise
        return f"underpowered: {c.underpowered}; no verdict" + _repeats(c)
    t, w, lo = c.tasks, len(c.improved), len(c.regressed)
    p = f"p = {c.p:.2g}, {c.method}"
    real = f"the difference is real ({p})"
    if c.significant and c.won > c.lost:
        line = f"{b} is better than {a} on {w} of {t} tasks, worse on {lo}; {real}"
    elif c.significant:
        line = f"{b} is worse than {a} on {lo} of {t} tasks, better on {w}; {real}"
    else:
        line = f"no evidence of a difference ({b} better on {w} of {t} tasks, worse on {lo}; {p})"
        line += _more(c)
    return line + _repeats(c) + _margin(c)


def _more(c: Comparison) -> str:
    """What more would take, or why more of the same would not help."""
    flips, need = c.won + c.lost, fewest_flips(c.alpha)
    unit = "task" if c.test == "tasks" else "pair"
    if not c.wins + c.losses:
        return "; every pair agreed: these tasks do not tell them apart"
    if not flips:
        return "; no task's pass rate differed: these tasks do not tell them apart"
    if not (c.won and c.lost) and flips < need:
        which = {1: f"the one {unit} that differs", 2: f"both {unit}s that differ"}.get(
            flips, f"all {flips} {unit}s that differ"
        )
        return f"; {which} went one way, but the exact test needs {need} to tell"
    with contextlib.suppress(ConfigurationError):
        return c.plan(c.margin or 0.10).after(c.units)
    return ""


def _repeats(c: Comparison) -> str:
    if not c.repeats_identical:
        return ""
    k = c.repeats
    if c.test == "tasks":
        return (
            f"; every task's {k} repeats were identical (a deterministic model): not new "
            "evidence, so each task counts once"
        )
    return (
        f"; but every task's {k} repeats were identical (a deterministic model), so this test "
        f"counted each task {k} times: over tasks, p = {c.task_p:.2g}"
    )


def _margin(c: Comparison) -> str:
    if not c.margin:
        return ""
    m = f"{c.margin * 100:g} points"
    if c.noninferiority_p != c.noninferiority_p:  # NaN: the differences do not vary
        return (
            f"; all {c.pairs} pairs differ alike, so the ±{m} margin cannot be tested "
            "(a t-test needs some spread)"
        )
    if all(d == 0 for d in c.differences):
        how = f"no pair disagreed: (1 − {c.margin:g})^{len(c.differences)}"
        if c.equivalence_p < c.alpha:
            return f"; equivalent within ±{m} ({how} = {c.equivalence_p:.2g})"
        return f"; too few pairs to call it equivalent within ±{m} ({how} = {c.equivalence_p:.2g})"
    if c.equivalence_p < c.alpha:
        return f"; equivalent within ±{m} (TOST p = {c.equivalence_p:.2g})"
    if c.noninferiority_p < c.alpha:
        return (
            f"; no worse than {c.baseline} by {m} or more (non-inferiority p = "
            f"{c.noninferiority_p:.2g})"
        )
    return (
        f"; cannot rule out that it is worse by {m} or more (non-inferiority p = "
        f"{c.noninferiority_p:.2g})"
    )
