"""The statistics of an evaluation.

The summary's own (what ``Evaluation.summary`` shows) come from the standard library and
numpy: importing scipy.stats costs ~2 s of CPU, more than a sweep of a hundred runs, and a
first summary should not wait for it. Each is the textbook definition that scipy implements,
and ``tests/evals/test_statistics.py`` checks each against scipy.stats:

* :func:`wilson` — a success rate's 95% Wilson score interval (Newcombe 1998, the formula of
  scipy's ``binomtest(...).proportion_ci(method="wilson")``; the normal quantile from
  :class:`statistics.NormalDist`);
* :func:`cluster_bootstrap` — the interval of a pooled rate when runs repeat per task: tasks
  are resampled as clusters, with the percentile method (the resamples and quantiles of
  scipy's ``bootstrap(..., paired=True, method="percentile")``, drawn the same way);
* :func:`pass_at_k` / :func:`pass_hat_k` — the unbiased estimators 1 − C(n−c,k)/C(n,k) and
  C(c,k)/C(n,k), in exact integers (:func:`math.comb`).

The comparison's and the plan's come from scipy.stats (no hand-written formulas), imported in
the background while the sweep runs (:func:`warm_up`):

* :func:`mcnemar_p` — the exact two-sided McNemar test on discordant pairs (``binomtest``);
  on tasks that differ, the same binomial is the exact sign test the comparisons use;
* :func:`paired_bootstrap` — a 95% interval for a paired difference of rates;
* :func:`mcnemar_power` / :func:`pairs_needed` — the exact power of that McNemar test for a
  true difference, and the fewest pairs that reach a power (``binom`` sums, no formula);
* :func:`one_sided_t` / :func:`tost` — non-inferiority and equivalence (two one-sided
  tests) on paired differences against a margin (``ttest_1samp``).

Bootstraps use the percentile method with 9,999 resamples and a fixed seed, so an
evaluation's intervals reproduce exactly.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import sys
import threading
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

__all__ = [
    "RESAMPLES",
    "cluster_bootstrap",
    "mcnemar_p",
    "mcnemar_power",
    "one_sided_t",
    "paired_bootstrap",
    "pairs_needed",
    "pass_at_k",
    "pass_hat_k",
    "tost",
    "warm_up",
    "wilson",
]

RESAMPLES = 9_999
NAN = float("nan")


def wilson(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``passed`` successes in ``n`` runs (NaN when n == 0)."""
    if n == 0:
        return NAN, NAN
    z = NormalDist().inv_cdf(0.5 + 0.5 * confidence)
    p = passed / n
    denominator = 2 * (n + z**2)
    centre = (2 * n * p + z**2) / denominator
    half = z / denominator * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if passed == 0 else centre - half), (1.0 if passed == n else centre + half)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` runs drawn from ``n`` (``c`` passing) passes."""
    if n < k or k < 1:
        return NAN
    return 1 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` runs drawn from ``n`` (``c`` passing) pass (τ-bench's pass^k)."""
    if n < k or k < 1:
        return NAN
    return math.comb(c, k) / math.comb(n, k)


def _rng(seed: int) -> Any:
    import numpy as np

    return np.random.default_rng(seed)


def cluster_bootstrap(
    passes: Sequence[int], counts: Sequence[int], *, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """The interval of sum(passes) / sum(counts), resampling tasks (clusters) whole."""
    pairs = [(p, n) for p, n in zip(passes, counts, strict=True) if n > 0]
    if not pairs:
        return NAN, NAN
    rates = {p / n for p, n in pairs}
    if len(pairs) < 2:  # one cluster says nothing about the spread between clusters
        return NAN, NAN
    if len(rates) == 1:  # every resample gives the same rate: the interval is the point
        rate = rates.pop()
        return rate, rate
    import numpy as np

    passed, runs = np.array([p for p, _ in pairs]), np.array([n for _, n in pairs])
    draws = _rng(seed).integers(0, len(pairs), (RESAMPLES, len(pairs)))  # tasks, drawn whole
    pooled = passed[draws].sum(axis=-1) / runs[draws].sum(axis=-1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(pooled, [alpha, 1 - alpha])
    return float(low), float(high)


def mcnemar_p(wins: int, losses: int) -> float:
    """Exact two-sided McNemar p-value: ``wins`` and ``losses`` are the discordant pairs (or
    the tasks whose pass rates differ: then it is the exact sign test)."""
    if wins + losses == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(int(wins), int(wins + losses), 0.5).pvalue)


def paired_bootstrap(
    baseline: Sequence[float],
    other: Sequence[float],
    *,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """The interval of mean(other − baseline), resampling the pairs together."""
    if len(baseline) != len(other):
        raise ValueError("paired samples must have the same length")
    diffs = {o - b for b, o in zip(baseline, other, strict=True)}
    if not diffs:
        return NAN, NAN
    if len(diffs) == 1:
        d = diffs.pop()
        return (d, d) if len(baseline) > 1 else (NAN, NAN)
    from scipy.stats import bootstrap

    def mean_difference(b: Any, o: Any, axis: int = -1) -> Any:
        return (o - b).mean(axis=axis)

    result = bootstrap(
        (list(baseline), list(other)),
        mean_difference,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=RESAMPLES,
        confidence_level=confidence,
        rng=_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def mcnemar_power(pairs: int, discordant: float, difference: float, alpha: float = 0.05) -> float:
    """The chance that the exact two-sided McNemar test (p < ``alpha``) finds ``difference``
    in ``pairs`` pairs, in its direction, when a pair disagrees with probability
    ``discordant``.

    Each pair disagrees with probability ``pd = discordant``; a disagreeing pair goes the
    better variant's way with probability ``q = (pd + difference) / (2 pd)``. Exactly: the
    number of disagreeing pairs ``D ~ Binomial(pairs, pd)``, the wins among them ``W ~
    Binomial(D, q)``, and the test rejects when ``W`` is in its two-sided critical region
    for ``D`` (the largest ``k`` with ``2·P(Bin(D, ½) ≤ k) < alpha``, and its mirror)."""
    import numpy as np
    from scipy.stats import binom

    if not 0 < discordant <= 1 or abs(difference) > discordant:
        raise ValueError(
            f"a difference of {difference:+g} needs at least that share of pairs to disagree "
            f"(discordant={discordant:g})"
        )
    d = np.arange(pairs + 1)
    k = binom.ppf(alpha / 2, d, 0.5) - 1  # the largest k with P(Bin(d, ½) <= k) < alpha / 2
    k = np.where(binom.cdf(k + 1, d, 0.5) < alpha / 2, k + 1, k)  # ppf's ties, guarded
    q = (discordant + abs(difference)) / (2 * discordant)
    reject = np.where(k >= 0, binom.sf(d - k - 1, d, q), 0.0)  # W >= d - k: the better side
    return float(np.sum(binom.pmf(d, pairs, discordant) * reject))


def pairs_needed(
    difference: float, discordant: float, power: float = 0.8, alpha: float = 0.05
) -> tuple[int, float]:
    """The fewest pairs whose :func:`mcnemar_power` reaches ``power``, and that power.

    The exact power is not monotone in the number of pairs (the critical region jumps), so
    the search walks up from half the normal approximation's answer and returns the first
    number that reaches the power."""
    from scipy.stats import norm

    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("power and alpha must be between 0 and 1")
    delta = abs(difference)
    if delta == 0:
        raise ValueError("a difference of 0 cannot be seen: give the difference to detect")
    z_a, z_b = norm.ppf(1 - alpha / 2), norm.ppf(power)
    approx = (z_a * math.sqrt(discordant) + z_b * math.sqrt(discordant - delta**2)) ** 2 / delta**2
    n = max(1, int(approx / 2))
    while n <= 1_000_000:
        achieved = mcnemar_power(n, discordant, delta, alpha)
        if achieved >= power:
            return n, achieved
        n += max(1, n // 200)  # steps of 0.5% past a few hundred pairs
    raise ValueError(f"more than a million pairs would be needed to see {difference:+g}")


def one_sided_t(diffs: Sequence[float], bound: float, alternative: str) -> float:
    """The p-value of a one-sided one-sample t-test of mean(diffs) against ``bound``
    (``alternative`` "greater": H0 mean <= bound; "less": H0 mean >= bound). NaN when the
    differences do not vary (the t statistic is undefined) or there are fewer than two."""
    values = [float(x) for x in diffs]
    if len(values) < 2 or len(set(values)) == 1:
        return NAN
    from scipy.stats import ttest_1samp

    return float(ttest_1samp(values, bound, alternative=alternative).pvalue)


def tost(diffs: Sequence[float], margin: float) -> tuple[float, float, float]:
    """Two one-sided tests of paired differences against ``±margin``: the p-values of
    non-inferiority (H0: mean <= -margin), of non-superiority (H0: mean >= +margin) and of
    equivalence (the larger of the two).

    When every difference is 0 (every pair agrees: the t statistic is undefined), each side
    is the exact chance of seeing no disagreement in ``n`` units if one variant lost (or won)
    at least ``margin`` of them: at most ``(1 - margin) ** n`` (``binom.pmf(0, n, margin)``)."""
    values = [float(x) for x in diffs]
    if values and all(x == 0 for x in values):
        from scipy.stats import binom

        p = float(binom.pmf(0, len(values), margin))
        return p, p, p
    lower = one_sided_t(diffs, -margin, "greater")
    upper = one_sided_t(diffs, margin, "less")
    both = NAN if math.isnan(lower) or math.isnan(upper) else max(lower, upper)
    return lower, upper, both


def is_nan(value: float) -> bool:
    return isinstance(value, float) and math.isnan(value)


def warm_up() -> None:
    """Import scipy.stats (~2 s of CPU) in a thread while the sweep runs, so the first
    ``summary`` does not stall the event loop (and a live view) for that long."""
    if "scipy.stats" in sys.modules:
        return

    def load() -> None:
        with contextlib.suppress(Exception):
            importlib.import_module("scipy.stats")

    threading.Thread(target=load, name="agentnb-scipy-import", daemon=True).start()
