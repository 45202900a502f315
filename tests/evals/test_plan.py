"""plan, TOST and the verdict against independent computations (statsmodels, brute force)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import multinomial, norm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.weightstats import DescrStatsW, ttost_paired

import agentnb as an
from agentnb.errors import ConfigurationError
from agentnb.evals import statistics as st
from agentnb.evals.record import EvalRecord


def _brute_power(n: int, discordant: float, difference: float, alpha: float) -> float:
    """Every (wins, losses, ties) outcome of n pairs, weighed by its multinomial chance, tested
    with statsmodels' exact McNemar: an independent computation of the same power."""
    p_win = (discordant + difference) / 2
    p_loss = (discordant - difference) / 2
    total = 0.0
    for wins, losses in itertools.product(range(n + 1), repeat=2):
        if wins + losses > n:
            continue
        chance = multinomial.pmf(
            [wins, losses, n - wins - losses], n, [p_win, p_loss, 1 - discordant]
        )
        if wins + losses == 0 or wins <= losses:
            continue
        table = [[0, losses], [wins, 0]]
        if mcnemar(table, exact=True).pvalue < alpha:
            total += chance
    return total


@pytest.mark.parametrize(("n", "pd", "delta"), [(12, 0.5, 0.3), (20, 0.3, 0.2), (25, 0.6, 0.1)])
def test_the_exact_power_equals_a_brute_force_sum_over_every_outcome(n, pd, delta):
    assert st.mcnemar_power(n, pd, delta, 0.05) == pytest.approx(_brute_power(n, pd, delta, 0.05))


def test_the_planned_pairs_reach_the_power_and_fewer_do_not_always():
    pairs, achieved = st.pairs_needed(0.10, 0.30, power=0.8, alpha=0.05)
    assert achieved >= 0.8
    assert st.mcnemar_power(pairs - 1, 0.30, 0.10) < 0.8
    # Connor's normal approximation (hand-computed here with scipy's normal quantiles): the
    # exact test is a little more conservative, so it needs a little more
    z_a, z_b = norm.ppf(0.975), norm.ppf(0.8)
    approx = (z_a * math.sqrt(0.3) + z_b * math.sqrt(0.3 - 0.01)) ** 2 / 0.01
    assert approx <= pairs <= 1.15 * approx


def test_the_planned_pairs_find_the_difference_in_a_simulation():
    """4,000 simulated sweeps of the planned size, tested with statsmodels' exact McNemar."""
    plan = an.evals.plan(0.15, discordant=0.35, tasks=30)
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(4000):
        counts = rng.multinomial(plan.pairs, [0.25, 0.10, 0.65])  # wins, losses, ties
        p = mcnemar([[0, counts[1]], [counts[0], 0]], exact=True).pvalue
        hits += p < 0.05 and counts[0] > counts[1]
    assert abs(hits / 4000 - plan.achieved_power) < 0.03
    # the plan speaks in tasks: repeats of the 30 are not more tasks
    assert plan.unit == "tasks" and plan.repeats is None and plan.needed == plan.pairs
    assert plan.more_tasks == plan.needed - 30
    assert f"{plan.needed} tasks; you have 30: about {plan.more_tasks} more" in plan.verdict
    assert "repeats of the same tasks do not count as tasks" in plan.verdict
    # the per-pair McNemar test's plan, asked for: pairs, and the repeats that make them
    pairs = an.evals.plan(0.15, discordant=0.35, tasks=30, unit="pairs")
    assert pairs.needed == plan.needed and pairs.repeats == math.ceil(pairs.needed / 30)
    assert (
        f"{pairs.needed} pairs" in pairs.verdict and "if repeats were independent" in pairs.verdict
    )
    assert an.evals.plan(0.15, discordant=0.35, tasks=500).verdict.endswith(
        "your 500 tasks are enough"
    )
    with pytest.raises(ConfigurationError, match="unit must be 'tasks' or 'pairs'"):
        an.evals.plan(0.15, discordant=0.35, unit="repeats")


def test_a_baseline_rate_plans_for_independent_runs():
    p = an.evals.plan(0.10, baseline=0.6)
    assert p.discordant == pytest.approx(0.6 * 0.3 + 0.7 * 0.4)
    assert p.pairs == st.pairs_needed(0.10, p.discordant)[0]
    with pytest.raises(ConfigurationError, match="disagree"):
        an.evals.plan(0.10)
    with pytest.raises(ConfigurationError, match="at least that share"):
        an.evals.plan(0.30, discordant=0.2)
    with pytest.raises(ConfigurationError, match="not a success rate"):
        an.evals.plan(0.5, baseline=0.7)


def test_a_difference_of_the_whole_range_is_planned_and_others_refused_in_words():
    """100 points (0% against 100%) is a difference a plan can see: every pair disagrees, all
    one way, and 6 pairs give 2 * 0.5**6 < 0.05 (it was refused as 'not between 0 and 1')."""
    for difference, baseline in ((1.0, 0.0), (-1.0, 1.0)):
        p = an.evals.plan(difference, baseline=baseline, tasks=5)
        assert (p.pairs, p.discordant) == (6, 1.0)
        assert st.mcnemar_power(5, 1.0, 1.0) < 0.8 <= st.mcnemar_power(6, 1.0, 1.0)
    for bad in (0, 0.0, 1.5, -2, True, "0.1", None):
        with pytest.raises(ConfigurationError, match="between -1 and 1 other than 0"):
            an.evals.plan(bad, baseline=0.2)


def _ev(a_outcomes, b_outcomes, repeats=1):
    records = []
    for variant, outcomes in (("a", a_outcomes), ("b", b_outcomes)):
        for i, outcome in enumerate(outcomes):
            task, repeat = f"t{i // repeats}", i % repeats
            records.append(EvalRecord(variant, task, repeat, "pass" if outcome else "fail"))
    return an.Evaluation.from_records(records)


def test_tost_and_non_inferiority_equal_statsmodels_on_a_hand_built_case():
    a = [1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1]
    b = [1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1]
    c = _ev(a, b).compare("a", "b", margin=0.2)
    p_tost, lower, _upper = ttost_paired(np.array(b, float), np.array(a, float), -0.2, 0.2)
    assert c.equivalence_p == pytest.approx(p_tost)
    diffs = np.array(b, float) - np.array(a, float)
    _, p_noninf, _ = DescrStatsW(diffs).ttest_mean(-0.2, alternative="larger")
    assert c.noninferiority_p == pytest.approx(p_noninf)
    assert c.noninferiority_p == pytest.approx(lower[1])


def test_with_repeats_the_tests_run_on_task_means():
    a = [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1]  # 6 tasks x 3 repeats
    b = [1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1]
    c = _ev(a, b, repeats=3).compare("a", "b", margin=0.1)
    means = np.array(b, float).reshape(6, 3).mean(1) - np.array(a, float).reshape(6, 3).mean(1)
    assert c.differences == pytest.approx(list(means))
    _, p, _ = DescrStatsW(means).ttest_mean(-0.1, alternative="larger")
    assert c.noninferiority_p == pytest.approx(p)


def test_the_verdict_says_better_worse_or_no_evidence_with_a_plan():
    better = _ev([0] * 12 + [1] * 8, [1] * 20).compare("a", "b")
    assert better.verdict.startswith("b is better than a on 12 of 20 tasks, worse on 0")
    assert "the difference is real (p = 0.00049, exact test over 20 tasks)" in better.verdict
    worse = _ev([1] * 20, [0] * 12 + [1] * 8).compare("a", "b")
    assert worse.verdict.startswith("b is worse than a on 12 of 20 tasks")
    vague = _ev([1, 0, 1, 0] * 5, [0, 1, 1, 0] * 5).compare("a", "b")
    assert vague.verdict.startswith("no evidence of a difference (b better on 5 of 20 tasks")
    need = vague.plan(0.10)
    assert f"about {need.needed} tasks to see 10 points (these are 20: add tasks, not " in (
        vague.verdict
    )
    assert need.discordant == pytest.approx(0.5)
    assert "verdict" in vague.to_frame().columns


def test_a_margin_verdict_says_non_inferior_or_cannot_rule_out():
    same = [1, 0, 1, 1, 0, 1, 1, 1, 1, 0] * 4
    other = list(same)
    other[0], other[1] = 0, 1  # one loss, one win in forty pairs
    c = _ev(same, other).compare("a", "b", margin=0.10)
    assert c.noninferiority_p < 0.05 and c.equivalence_p < 0.05
    assert "equivalent within ±10 points" in c.verdict
    lost = list(same)
    for i in (0, 2, 3, 5):
        lost[i] = 0
    c = _ev(same, lost).compare("a", "b", margin=0.05)
    assert "cannot rule out that it is worse by 5 points or more" in c.verdict
    with pytest.raises(ConfigurationError, match="margin"):
        _ev(same, lost).compare("a", "b", margin=5)


def test_when_every_pair_agrees_equivalence_is_the_exact_chance_of_no_disagreement():
    from scipy.stats import binom

    outcomes = [1, 0, 1, 1, 0] * 8  # 40 pairs, every one a tie
    c = _ev(outcomes, list(outcomes)).compare("a", "b", margin=0.10)
    assert c.equivalence_p == pytest.approx(0.9**40) == pytest.approx(binom.pmf(0, 40, 0.1))
    assert "equivalent within ±10 points (no pair disagreed: (1 − 0.1)^40 = 0.015)" in c.verdict
    few = _ev([1, 0, 1], [1, 0, 1]).compare("a", "b", margin=0.10)
    assert "too few pairs to call it equivalent" in few.verdict


def test_after_no_evidence_the_verdict_never_asks_for_what_the_runs_already_have():
    # every pair agreed (both at 100 %): no number of repeats of the same runs would help
    same = _ev([1] * 20, [1] * 20, repeats=4).compare("a", "b")
    assert "every pair agreed: these tasks do not tell them apart" in same.verdict
    assert "would need" not in same.verdict
    # 400 tasks, 20 flips each way: the runs had the power to see 10 points, and did not
    flips = [1, 0] * 20 + [1] * 360
    enough = _ev(flips, [0, 1] * 20 + [1] * 360).compare("a", "b")
    need = enough.plan(0.10)
    assert need.needed <= enough.tasks == 400
    assert enough.verdict.endswith(
        "400 tasks were enough to see 10 points, so it is likely smaller"
    )
    assert "you would need" not in enough.verdict
    # the same flips as repeats of 100 tasks: no task's pass rate moved, whatever the pairs did
    repeated = _ev(flips, [0, 1] * 20 + [1] * 360, repeats=4).compare("a", "b")
    assert repeated.wins == repeated.losses == 20 and not repeated.improved + repeated.regressed
    assert repeated.verdict.endswith(
        "no task's pass rate differed: these tasks do not tell them apart"
    )


def test_flips_all_one_way_but_too_few_say_so_instead_of_asking_for_repeats():
    # 0 % -> 100 % on 5 paired tasks: p = 2 * 0.5**5 = 0.0625; 158 repeats was no answer
    few = _ev([0] * 5, [1] * 5).compare("a", "b")
    assert not few.significant and few.mcnemar_p == pytest.approx(0.0625)
    assert few.verdict.endswith(
        "all 5 tasks that differ went one way, but the exact test needs 6 to tell"
    )
    assert "repeats" not in few.verdict
    assert an.evals.planning.fewest_flips(0.05) == 6 and an.evals.planning.fewest_flips(0.01) == 8


def _repeated(outcomes, repeats):
    return [o for o in outcomes for _ in range(repeats)]


def test_identical_repeats_are_not_new_evidence_the_verdict_is_the_one_run_verdict():
    """Issue 36: a 2-of-13-task regression gave p = 0.5 with one run per task and p = 0.031
    with three identical repeats (each counted as an independent pair) while the
    task-clustered interval still included 0."""
    a, b = [1] * 13, [0, 0] + [1] * 11
    once = _ev(a, b).compare("a", "b")
    thrice = _ev(_repeated(a, 3), _repeated(b, 3), repeats=3).compare("a", "b")
    assert once.p == thrice.p == pytest.approx(0.5) and thrice.test == "tasks"
    assert not once.significant and not thrice.significant
    assert (once.won, once.lost) == (thrice.won, thrice.lost) == (0, 2)
    assert thrice.repeats_identical and not once.repeats_identical
    assert thrice.ci_low < 0 <= thrice.ci_high  # the task-clustered interval includes 0
    assert thrice.verdict.startswith(
        "no evidence of a difference (b better on 0 of 13 tasks, worse on 2; p = 0.5, exact "
        "test over 13 tasks, each task's 3 repeats as its pass rate); both tasks that differ"
    )
    assert "every task's 3 repeats were identical (a deterministic model): not new evidence" in (
        thrice.verdict
    )
    # the per-pair McNemar test, asked for by name: six losses of 39 pairs, and it says why not
    pairs = thrice.using("pairs")
    assert pairs.p == pairs.mcnemar_p == pytest.approx(0.03125) and pairs.significant
    assert "exact McNemar over 39 pairs, assuming the 3 repeats of a task independent" in (
        pairs.verdict
    )
    assert pairs.verdict.endswith("so this test counted each task 3 times: over tasks, p = 0.5")
    assert an.evals.comparison.compare(
        _ev(_repeated(a, 3), _repeated(b, 3), repeats=3), "a", "b", test="pairs"
    ).p == pytest.approx(0.03125)
    with pytest.raises(ConfigurationError, match="test must be one of"):
        once.using("repeats")


def test_repeats_that_vary_count_as_each_task_s_pass_rate():
    # 6 tasks x 3 repeats: b passes more repeats of tasks 0-2, fewer of task 3, as many of 4-5
    a = [1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0]
    b = [1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0]
    c = _ev(a, b, repeats=3).compare("a", "b")
    assert c.improved == ["t0", "t1", "t2"] and c.regressed == ["t3"]
    assert (c.won, c.lost) == (3, 1) and (c.wins, c.losses) == (5, 1)
    assert c.task_p == pytest.approx(st.mcnemar_p(3, 1)) == c.p
    assert not c.repeats_identical and "identical" not in c.verdict
    assert c.to_frame().loc[0, "test"] == "tasks" and c.to_frame().loc[0, "p"] == c.p
