"""The statistics of an evaluation, each from scipy.stats (no hand-written formulas).

* :func:`wilson` — a success rate's 95% Wilson interval (``binomtest(...).proportion_ci``);
* :func:`cluster_bootstrap` — the interval of a pooled rate when runs repeat per task:
  tasks are resampled as clusters (``bootstrap(..., paired=True)`` over per-task counts);
* :func:`pass_at_k` / :func:`pass_hat_k` — the unbiased estimators 1 − C(n−c,k)/C(n,k) and
  C(c,k)/C(n,k), i.e. hypergeometric probabilities (``hypergeom.sf`` and ``.pmf``);
* :func:`mcnemar_p` — the exact two-sided McNemar test on discordant pairs (``binomtest``);
* :func:`paired_bootstrap` — a 95% interval for a paired difference of rates.

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
from typing import Any

__all__ = [
    "RESAMPLES",
    "cluster_bootstrap",
    "mcnemar_p",
    "paired_bootstrap",
    "pass_at_k",
    "pass_hat_k",
    "warm_up",
    "wilson",
]

RESAMPLES = 9_999
NAN = float("nan")


def wilson(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``passed`` successes in ``n`` runs (NaN when n == 0)."""
    if n == 0:
        return NAN, NAN
    from scipy.stats import binomtest

    ci = binomtest(int(passed), int(n)).proportion_ci(confidence, method="wilson")
    return float(ci.low), float(ci.high)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` runs drawn from ``n`` (``c`` passing) passes."""
    if n < k or k < 1:
        return NAN
    from scipy.stats import hypergeom

    return float(hypergeom.sf(0, n, c, k))  # P(at least one pass) = 1 − C(n−c,k)/C(n,k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` runs drawn from ``n`` (``c`` passing) pass (τ-bench's pass^k)."""
    if n < k or k < 1:
        return NAN
    from scipy.stats import hypergeom

    return float(hypergeom.pmf(k, n, c, k))


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
    from scipy.stats import bootstrap

    def pooled(p: Any, n: Any, axis: int = -1) -> Any:
        return p.sum(axis=axis) / n.sum(axis=axis)

    data = ([p for p, _ in pairs], [n for _, n in pairs])
    result = bootstrap(
        data,
        pooled,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=RESAMPLES,
        confidence_level=confidence,
        rng=_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def mcnemar_p(wins: int, losses: int) -> float:
    """Exact two-sided McNemar p-value: ``wins`` and ``losses`` are the discordant pairs."""
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
