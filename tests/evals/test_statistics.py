"""The statistics of hand-built evaluations with known answers, against independent
computations (closed forms and brute force written here, not agentnb's code paths)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as hs

import agentnb as an
from agentnb.evals import EvalRecord


def evaluation(outcomes: dict[str, dict[str, str]], *, errors="fail") -> an.Evaluation:
    """variant -> task -> outcomes string, one letter per repeat: p(ass), f(ail), e(rror)."""
    letters = {"p": "pass", "f": "fail", "e": "error"}
    records = [
        EvalRecord(variant, task, repeat, letters[letter])
        for variant, tasks in outcomes.items()
        for task, runs in tasks.items()
        for repeat, letter in enumerate(runs)
    ]
    return an.Evaluation.from_records(records, errors=errors)


def wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_success_rates_and_wilson_intervals_with_one_repeat():
    ev = evaluation(
        {
            "a": {f"t{i}": "p" for i in range(7)} | {"t7": "f", "t8": "f", "t9": "f"},
            "b": {f"t{i}": "f" for i in range(9)} | {"t9": "p"},
        }
    )
    s = ev.summary
    assert list(s.index) == ["a", "b"]
    assert s.loc["a", "success_rate"] == 0.7 and s.loc["b", "success_rate"] == 0.1
    assert (s.loc["a", "n"], s.loc["a", "passed"], s.loc["a", "failed"]) == (10, 7, 3)
    for variant, k in (("a", 7), ("b", 1)):
        low, high = wilson_by_hand(k, 10)
        assert s.loc[variant, "ci_low"] == pytest.approx(low, abs=1e-12)
        assert s.loc[variant, "ci_high"] == pytest.approx(high, abs=1e-12)
    assert set(s["ci_method"]) == {"wilson"}
    assert "Wilson" in s.attrs["caption"] and 'errors="fail"' in s.attrs["caption"]


def test_errors_fail_and_drop_give_the_documented_denominators():
    outcomes = {"a": {"t0": "p", "t1": "p", "t2": "f", "t3": "e", "t4": "e"}}
    fail, drop = evaluation(outcomes).summary, evaluation(outcomes, errors="drop").summary
    # fail: an error is a run that did not pass, in the denominator: 2 / 5
    assert (fail.loc["a", "n"], fail.loc["a", "errors"], fail.loc["a", "success_rate"]) == (
        5,
        2,
        0.4,
    )
    # drop: errors leave the denominator (still counted in `errors`): 2 / 3
    assert drop.loc["a", "n"] == 3 and drop.loc["a", "errors"] == 2
    assert drop.loc["a", "success_rate"] == pytest.approx(2 / 3)
    assert drop.loc["a", "ci_low"] == pytest.approx(wilson_by_hand(2, 3)[0])
    assert 'errors="drop"' in drop.attrs["caption"] and "excludes" in drop.attrs["caption"]


def pass_at_k_brute(n: int, c: int, k: int) -> tuple[float, float]:
    """Every k-subset of n runs (c of them passing): the share with any pass, with all pass."""
    runs = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(runs, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


def test_pass_at_k_and_pass_hat_k_are_the_unbiased_estimators_averaged_over_tasks():
    per_task = {"t0": "ppppp", "t1": "ppfpf", "t2": "fffff", "t3": "pffff", "t4": "ppppf"}
    ev = evaluation({"a": per_task})
    s = ev.summary
    brute = [pass_at_k_brute(5, runs.count("p"), 5) for runs in per_task.values()]
    assert s.loc["a", "pass@5"] == pytest.approx(sum(b[0] for b in brute) / 5)
    assert s.loc["a", "pass^5"] == pytest.approx(sum(b[1] for b in brute) / 5)
    # k = n makes them plain: any pass / all pass, per task
    assert s.loc["a", "pass@5"] == pytest.approx(4 / 5) and s.loc["a", "pass^5"] == pytest.approx(
        1 / 5
    )
    from agentnb.evals import statistics as st

    for n, c, k in [(10, 3, 4), (6, 6, 2), (7, 0, 3), (8, 5, 8)]:
        any_, all_ = pass_at_k_brute(n, c, k)
        assert st.pass_at_k(n, c, k) == pytest.approx(any_)
        assert st.pass_hat_k(n, c, k) == pytest.approx(all_)
        assert st.pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))


def test_flakiness_per_task_and_its_counts():
    ev = evaluation({"a": {"t0": "ppp", "t1": "pfp", "t2": "fff"}})
    flaky = ev.flakiness.set_index("task")
    assert list(flaky["label"]) == ["3/3", "2/3", "0/3"]
    assert list(flaky["kind"]) == ["all", "some", "none"]
    s = ev.summary
    assert (s.loc["a", "tasks_all"], s.loc["a", "tasks_some"], s.loc["a", "tasks_none"]) == (
        1,
        1,
        1,
    )


def test_the_repeated_interval_is_a_task_clustered_bootstrap():
    per_task = {"t0": "ppp", "t1": "pfp", "t2": "fff", "t3": "ppf", "t4": "ppp", "t5": "fpf"}
    s = evaluation({"a": per_task}).summary
    assert s.loc["a", "ci_method"] == "task_bootstrap" and "clustered" in s.attrs["caption"]
    passes = np.array([r.count("p") for r in per_task.values()], dtype=float)
    # independently: resample the 6 tasks with replacement, pool their runs, take percentiles
    rng = np.random.default_rng(12345)
    picks = rng.integers(0, 6, size=(40_000, 6))
    pooled = passes[picks].sum(axis=1) / (3 * 6)
    low, high = np.percentile(pooled, [2.5, 97.5])
    assert s.loc["a", "success_rate"] == pytest.approx(passes.sum() / 18)
    assert s.loc["a", "ci_low"] == pytest.approx(low, abs=0.03)
    assert s.loc["a", "ci_high"] == pytest.approx(high, abs=0.03)
    assert s.loc["a", "ci_low"] < s.loc["a", "success_rate"] < s.loc["a", "ci_high"]


def mcnemar_by_hand(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def test_compare_pairs_runs_and_gives_the_exact_mcnemar_p():
    a = {f"t{i}": "p" for i in range(20)}
    b = dict(a)
    for i in range(8):  # 8 tasks b fails where a passes
        b[f"t{i}"] = "f"
    a["t19"] = "f"  # 1 task only b passes
    ev = evaluation({"a": a, "b": b})
    cmp = ev.compare("a", "b")
    assert (cmp.pairs, cmp.wins, cmp.losses, cmp.ties) == (20, 1, 8, 11)
    assert cmp.mcnemar_p == pytest.approx(mcnemar_by_hand(1, 8))  # 0.0390625
    assert cmp.mcnemar_p == pytest.approx(0.0390625)
    assert set(cmp.regressed) == {f"t{i}" for i in range(8)} and cmp.improved == ["t19"]
    assert cmp.difference == pytest.approx(12 / 20 - 19 / 20)
    assert ev.compare("b", "a").mcnemar_p == cmp.mcnemar_p
    assert ev.compare("a", "a").mcnemar_p == 1.0 and ev.compare("a", "a").wins == 0


def test_a_comparison_names_its_variants_in_the_order_compare_was_given_them():
    """ev.compare("a", "b") printed "b vs a" (issue 31); the wins are b's, said so."""
    ev = evaluation({"a": {"t0": "p", "t1": "p"}, "b": {"t0": "f", "t1": "p"}})
    cmp = ev.compare("a", "b")
    assert repr(cmp).startswith(
        "<Comparison a vs b: 2 tasks, 2 pairs, b 0 wins / 1 losses / 1 ties"
    )
    html = cmp._repr_mimebundle_()["text/html"]
    assert html.index("<b>a</b>") < html.index("<b>b</b>") and "b 0 wins" in html


def test_the_paired_bootstrap_interval_matches_scipy_and_a_hand_resampling():
    a = dict.fromkeys([f"t{i}" for i in range(30)], "p")
    b = dict(a)
    for i in range(0, 30, 3):
        b[f"t{i}"] = "f"
    for i in (1, 4):
        a[f"t{i}"] = "f"
    cmp = evaluation({"a": a, "b": b}).compare("a", "b")
    x = np.array([float(a[t] == "p") for t in a])
    y = np.array([float(b[t] == "p") for t in a])
    direct = scipy.stats.bootstrap(
        (x, y),
        lambda p, q, axis=-1: (q - p).mean(axis=axis),
        paired=True,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(0),
    )
    assert cmp.ci_low == pytest.approx(direct.confidence_interval.low)
    assert cmp.ci_high == pytest.approx(direct.confidence_interval.high)
    rng = np.random.default_rng(7)
    idx = rng.integers(0, 30, size=(40_000, 30))
    low, high = np.percentile((y - x)[idx].mean(axis=1), [2.5, 97.5])
    assert cmp.ci_low == pytest.approx(low, abs=0.03) and cmp.ci_high == pytest.approx(
        high, abs=0.03
    )
    assert cmp.ci_low <= cmp.difference <= cmp.ci_high


def test_errors_drop_leaves_a_pair_out_of_the_comparison():
    ev = evaluation(
        {"a": {"t0": "p", "t1": "e", "t2": "f"}, "b": {"t0": "f", "t1": "p", "t2": "p"}},
        errors="drop",
    )
    cmp = ev.compare("a", "b")
    assert cmp.pairs == 2 and (cmp.wins, cmp.losses) == (1, 1)
    ev_fail = evaluation(
        {"a": {"t0": "p", "t1": "e", "t2": "f"}, "b": {"t0": "f", "t1": "p", "t2": "p"}}
    )
    assert ev_fail.compare("a", "b").pairs == 3 and ev_fail.compare("a", "b").wins == 2


@given(
    hs.integers(1, 30).flatmap(
        lambda n: hs.tuples(hs.just(n), hs.integers(0, n), hs.integers(1, n))
    )
)
def test_pass_at_k_and_pass_hat_k_bound_each_other(case):
    from agentnb.evals import statistics as st

    n, c, k = case
    at, hat = st.pass_at_k(n, c, k), st.pass_hat_k(n, c, k)
    assert 0.0 <= hat <= c / n + 1e-12 and c / n <= at + 1e-12 and at <= 1.0 + 1e-12
    if c < n:  # one more pass never lowers either
        assert st.pass_at_k(n, c + 1, k) >= at - 1e-12 and st.pass_hat_k(n, c + 1, k) >= hat - 1e-12


@given(hs.integers(1, 200).flatmap(lambda n: hs.tuples(hs.just(n), hs.integers(0, n))))
def test_wilson_holds_the_observed_rate_and_stays_in_zero_one(case):
    from agentnb.evals import statistics as st

    n, k = case
    low, high = st.wilson(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


@given(hs.integers(0, 40), hs.integers(0, 40))
def test_mcnemar_is_symmetric_and_a_probability(wins, losses):
    from agentnb.evals import statistics as st

    p = st.mcnemar_p(wins, losses)
    assert 0.0 < p <= 1.0 and p == st.mcnemar_p(losses, wins)
    if wins == losses:
        assert p == 1.0
    assert mcnemar_by_hand(wins, losses) == pytest.approx(p)


# -- the summary's statistics come from the standard library and numpy, and equal scipy's -------
@given(
    hs.integers(1, 300).flatmap(lambda n: hs.tuples(hs.just(n), hs.integers(0, n))),
    hs.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_wilson_equals_scipys_binomtest_interval(case, confidence):
    from agentnb.evals import statistics as st

    n, k = case
    ci = scipy.stats.binomtest(k, n).proportion_ci(confidence, method="wilson")
    assert st.wilson(k, n, confidence) == pytest.approx((ci.low, ci.high), abs=1e-13)


@given(
    hs.integers(1, 40).flatmap(
        lambda n: hs.tuples(hs.just(n), hs.integers(0, n), hs.integers(1, n))
    )
)
def test_pass_at_k_and_pass_hat_k_equal_scipys_hypergeometric(case):
    from agentnb.evals import statistics as st

    n, c, k = case
    assert st.pass_at_k(n, c, k) == pytest.approx(scipy.stats.hypergeom.sf(0, n, c, k), abs=1e-13)
    assert st.pass_hat_k(n, c, k) == pytest.approx(scipy.stats.hypergeom.pmf(k, n, c, k), abs=1e-13)


@given(
    hs.lists(
        hs.integers(1, 5).flatmap(lambda n: hs.tuples(hs.integers(0, n), hs.just(n))),
        min_size=2,
        max_size=30,
    ),
    hs.integers(0, 2**32 - 1),
)
def test_the_cluster_bootstrap_equals_scipys_paired_percentile_bootstrap(tasks, seed):
    from agentnb.evals import statistics as st

    passes, counts = [p for p, _ in tasks], [n for _, n in tasks]
    low, high = st.cluster_bootstrap(passes, counts, seed=seed)
    if len({p / n for p, n in tasks}) == 1:
        assert low == high == passes[0] / counts[0]
        return

    def pooled(p, n, axis=-1):
        return p.sum(axis=axis) / n.sum(axis=axis)

    direct = scipy.stats.bootstrap(
        (passes, counts),
        pooled,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=st.RESAMPLES,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    assert (low, high) == pytest.approx((direct.low, direct.high), abs=1e-12)


def test_a_summary_never_waits_for_scipy_stats():
    """scipy.stats costs ~2 s of CPU to import: the summary (with one repeat and with
    several) is computed without it, so the first one after a sweep is instant."""
    import subprocess
    import sys

    code = """
import sys
import agentnb as an
from agentnb.evals import EvalRecord
for repeats in (1, 3):
    records = [EvalRecord(v, f"t{t}", r, "pass" if t * (r + 1) % 3 else "fail")
               for v in ("a", "b") for t in range(8) for r in range(repeats)]
    s = an.Evaluation.from_records(records).summary
    assert 0 < s.loc["a", "ci_low"] < s.loc["a", "ci_high"] < 1, s
print(sorted(m for m in sys.modules if m.startswith("scipy")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
