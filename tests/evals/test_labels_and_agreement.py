"""Human labels on runs and a judge graded by them (issue 41): labels as annotations that
survive save/load, an.checks.human(), Cohen's kappa equal to an independent implementation's,
Krippendorff's alpha for several raters, a judge below a threshold flagged where it shows."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from statsmodels.stats.inter_rater import cohens_kappa

import agentnb as an
from agentnb._html import escape
from agentnb.evals.agreement import cohen_kappa
from tests.evals import tuning_agents as toy


def seeded_judge(seed: int = 7, wrong: float = 0.3) -> an.models.FunctionModel:
    """A judge that calls an answer with °C good, and is wrong a seeded 30% of the time."""
    rng = random.Random(seed)

    def grade(request):
        answer = request.messages[-1]["content"]
        good = "sunglasses" in answer
        if rng.random() < wrong:
            good = not good
        return json.dumps({"reasoning": "seeded", "verdict": "pass" if good else "fail"})

    return an.models.FunctionModel(grade, name="seeded-judge")


async def labelled() -> an.Evaluation:
    tasks = toy.tasks(8)
    judge = an.checks.judge(seeded_judge(), "Does the answer say what to take?")
    graded = an.TaskSet([t.model_copy(update={"checks": (*t.checks, judge)}) for t in tasks])
    ev = await an.evaluate(toy.variants(), graded, repeats=2, log=False)
    for r in ev.records:  # the person: good when the answer gives the weather in full
        good = "sunglasses" in (r.output or "")
        ev.label(
            r.variant, r.task, r.repeat, "pass" if good else "fail", "full" if good else "thin"
        )
    return ev


async def test_labels_are_annotations_that_survive_save_and_load(tmp_path: Path) -> None:
    ev = await an.evaluate(toy.variants(), toy.tasks(3), log=False)
    made = ev.label("terse", "city-1", 0, "✗", "no temperature")
    assert made is not None and made.verdict == "fail"
    assert (
        ev.record("terse", "city-1").run.annotations["labels"]["human"]["note"] == "no temperature"
    )
    ev.label("terse", "city-1", 0, "bad", "no temperature", rater="bob")
    ev.save(tmp_path / "ev.jsonl")
    back = an.Evaluation.load(tmp_path / "ev.jsonl")
    assert back.labels[["rater", "verdict", "note"]].values.tolist() == [
        ["human", "fail", "no temperature"],
        ["bob", "fail", "no temperature"],
    ]
    assert back.record("terse", "city-1").outcome == ev.record("terse", "city-1").outcome
    ev.label("terse", "city-1", 0, None)  # removed
    assert ev.labels["rater"].tolist() == ["bob"]
    with pytest.raises(an.ConfigurationError, match="'pass' or 'fail'"):
        ev.label("terse", "city-1", 0, "maybe")
    html = back.outputs().static_bundle()["text/html"]
    assert "bob: ✗ fail — no temperature" in html


async def test_human_is_a_check_like_any_other() -> None:
    ev = await an.evaluate(toy.variants(), toy.tasks(2), log=False)
    ev.label("polite", "city-0", 0, "pass", "fine")
    ev.label("terse", "city-0", 0, "fail", "too short")
    again = await ev.rescore(checks=[an.checks.human()], log=False)
    assert again.record("polite", "city-0").outcome == "pass"
    assert again.record("terse", "city-0").failed_checks[0].reason == "too short"
    unlabelled = again.record("polite", "city-1")
    assert unlabelled.outcome == "error" and "nobody labelled this run" in unlabelled.error
    assert an.checks.human().to_dict() == {"check": "human", "rater": "human"}


async def test_agreement_equals_an_independent_implementations_cohen_kappa() -> None:
    ev = await labelled()
    found = ev.agreement("judge", "human")
    table = found.table.values.tolist()
    assert sum(map(sum, table)) == found.n == 32
    theirs = cohens_kappa(table)
    assert found.kappa == pytest.approx(theirs.kappa, abs=1e-12)
    assert found.interval[0] == pytest.approx(theirs.kappa_low, abs=1e-12)
    assert found.interval[1] == pytest.approx(theirs.kappa_upp, abs=1e-12)
    assert 0 < found.kappa < 1  # the seeded judge is wrong some of the time
    assert len(found.disagreements) == table[0][1] + table[1][0]
    assert set(found.disagreements.columns) >= {"variant", "task", "repeat", "human", "human: note"}
    assert found.verdict.startswith(f"{found.raters[0]} and human agree at κ = {found.kappa:.2f}")


def test_cohen_kappa_by_hand_matches_statsmodels_on_many_tables() -> None:
    rng = random.Random(0)
    for _ in range(200):
        table = [[rng.randrange(0, 30) for _ in range(2)] for _ in range(2)]
        if len({(i == j) for i in range(2) for j in range(2) if table[i][j]}) < 1:
            continue
        mine = cohen_kappa(table)
        if mine[0] != mine[0]:  # undefined: every verdict the same
            continue
        theirs = cohens_kappa(table)
        assert mine[0] == pytest.approx(theirs.kappa, abs=1e-12)
        assert mine[1:] == pytest.approx((theirs.kappa_low, theirs.kappa_upp), abs=1e-12)


async def test_a_judge_below_the_threshold_is_flagged_wherever_its_verdicts_show() -> None:
    from agentnb.widgets.evals import run_payload
    from agentnb.widgets.grid import grid_state

    ev = await labelled()
    found = ev.agreement("judge", "human", threshold=0.95)
    judge = found.raters[0]
    assert found.flagged == [judge] and judge in ev.flags
    assert f"{judge} ⚑" in " ".join(ev.runs["failed_checks"])
    assert "⚑" in ev.summary.attrs["caption"] and "κ =" in ev.summary.attrs["caption"]
    failed_by_judge = next(r for r in ev.records if any(c.name == judge for c in r.failed_checks))
    assert escape(f"{judge} ⚑") in ev.outputs().static_bundle()["text/html"]
    detail = run_payload(ev, *failed_by_judge.key)
    assert next(c["flag"] for c in detail["checks"] if c["name"] == judge).startswith("agrees")
    cell = grid_state(ev)["cells"][failed_by_judge.task][failed_by_judge.variant][0]
    assert any(c["flag"] for c in cell["failed"])
    assert ev.agreement("judge", "human", threshold=0.0).flagged == [] and not ev.flags


async def test_several_raters_read_by_krippendorffs_alpha() -> None:
    import krippendorff
    import numpy as np

    ev = await labelled()
    for r in ev.records[::3]:  # bob disagrees with the person on every third run
        said = r.run.annotations["labels"]["human"]["verdict"]
        ev.label(r.variant, r.task, r.repeat, "fail" if said == "pass" else "pass", rater="bob")
    found = ev.agreement("human", "bob", "outcome")
    assert found.statistic == "krippendorff_alpha"
    data = [
        [
            {"pass": 1.0, "fail": 0.0}[r.run.annotations["labels"][who]["verdict"]]
            if who in r.run.annotations["labels"]
            else np.nan
            for r in ev.records
        ]
        for who in ("human", "bob")
    ] + [[1.0 if r.passed else 0.0 for r in ev.records]]
    assert found.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=np.array(data), level_of_measurement="nominal")
    )
    low, high = found.interval
    assert low <= found.alpha <= high


async def test_unknown_or_ambiguous_raters_are_refused_by_name() -> None:
    ev = await an.evaluate(toy.variants(), toy.tasks(2), log=False)
    with pytest.raises(an.ConfigurationError, match="nobody has labelled a run"):
        ev.agreement("answer_contains", "human")
    ev.label("polite", "city-0", 0, "pass")
    with pytest.raises(an.ConfigurationError, match="no rater 'judge'"):
        ev.agreement("judge", "human")
