"""Re-scoring stored runs (issue 41): no agent model called, end states and traces read where
they were kept and refused by name where not, a judge metered, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentnb as an
from agentnb.__main__ import main
from tests.evals import tuning_agents as toy


def _state_tasks(setup=toy.desk) -> an.TaskSet:
    return an.TaskSet(
        [an.Task("city-0", "Beijing weather?", checks=[an.checks.answer_contains("sunny")],
                 setup=setup)]
    )  # fmt: skip


async def test_end_state_checks_read_kept_states_and_are_refused_by_name_without(
    tmp_path: Path,
) -> None:
    ev = await an.evaluate(toy.variants(), _state_tasks(), log=False)
    check = an.checks.end_state(toy.booked)
    here = await ev.rescore(checks=[check], log=False)
    assert [r.outcome for r in here.records] == ["pass", "pass"]
    # a file keeps a state that is JSON data: the loaded runs are re-scored on it
    loaded = an.Evaluation.load(ev.save(tmp_path / "ev.jsonl"))
    again = await loaded.rescore(checks=[check], log=False)
    assert [r.outcome for r in again.records] == ["pass", "pass"]
    # a state it cannot keep (a lock) is refused by the check's name, with the reason
    ev = await an.evaluate(toy.variants(), _state_tasks(toy.locked_desk), log=False)
    loaded = an.Evaluation.load(ev.save(tmp_path / "locked.jsonl"))
    refused = await loaded.rescore(checks=[check], log=False)
    assert [r.outcome for r in refused.records] == ["error", "error"]
    for record in refused.records:
        (result,) = record.checks
        assert result.name == "end_state(booked)" and not result.passed
        assert "refused" in result.reason and "a lock is not JSON data" in result.reason


async def test_a_check_reading_events_is_refused_by_name_when_no_trace_was_kept(
    tmp_path: Path,
) -> None:
    log = an.evals.ExperimentLog(tmp_path / "log.sqlite")
    ev = await an.evaluate(toy.variants(), toy.tasks(2), log=log)
    assert [
        r.outcome for r in (await ev.rescore(checks=[toy.stopped_once], log=False)).records
    ] == ["pass"] * 4
    back = an.evals.experiment(ev.experiment.id, log)
    with pytest.raises(
        an.ConfigurationError, match=r"checks \['stopped_once'\] read what the runs"
    ):
        await back.rescore(checks=[toy.stopped_once], log=False)


async def test_a_judge_calls_only_its_model_and_is_metered(tmp_path: Path) -> None:
    from tests.evals.test_labels_and_agreement import seeded_judge

    ev = await an.evaluate(toy.variants(), toy.tasks(3), log=False)
    toy.CALLS.clear()
    judge = an.checks.judge(seeded_judge(wrong=0.0), "Does it say what to take?")
    again = await ev.rescore(checks=[judge], log=False)
    assert toy.CALLS == []
    assert [r.passed for r in again.records] == ["sunglasses" in r.output for r in ev.records]
    (meter,) = again.judge_runs
    assert meter.iterations == 6 and meter.model == "seeded-judge"
    ev.save(tmp_path / "ev.jsonl", traces=False)
    tasks = an.TaskSet([t.model_copy(update={"checks": (judge,)}) for t in ev.tasks])
    loaded = an.Evaluation.load(tmp_path / "ev.jsonl")
    with pytest.raises(an.ConfigurationError, match="has no model: rescore"):
        await loaded.rescore(checks=[an.checks.judge(None, "Does it say what to take?")], log=False)
    again = await loaded.rescore(tasks=tasks, log=False)
    assert again.judge_runs[0].iterations == 6


async def test_edited_tasks_give_their_checks_by_name_and_a_new_input_is_refused() -> None:
    ev = await an.evaluate(toy.variants(), toy.tasks(3), log=False)
    edited = ev.tasks["city-1"].model_copy(update={"checks": (an.checks.answer_contains("OK"),)})
    again = await ev.rescore(tasks=[edited], log=False)
    assert again.tasks.names == ["city-1"] and again.variants == ["polite", "terse"]
    assert [r.outcome for r in again.records] == [
        "pass" if "OK" in r.output else "fail" for r in again.records
    ]
    moved = edited.model_copy(update={"input": "Paris weather?"})
    with pytest.raises(an.ConfigurationError, match="its input is not what these runs answered"):
        await ev.rescore(tasks=[moved], log=False)
    with pytest.raises(an.ConfigurationError, match="not tasks of this evaluation"):
        await ev.rescore(tasks=["city-9"], log=False)


def test_python_m_agentnb_rescore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    place = tmp_path / "log.sqlite"
    ev = asyncio.run(an.evaluate(toy.variants(), toy.tasks(4), repeats=2, log=place))
    code = main(["rescore", ev.experiment.id[:7], "--checks", "tests.evals.tuning_agents:sunglasses_checks",
                 "--log", str(place), "--json", str(tmp_path / "out.json"), "--note", "stricter"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    changed = sum(r.outcome == "pass" and r.variant == "terse" for r in ev.records)
    assert f"{changed} runs changed outcome" in out
    assert f"rescore of {ev.experiment.id}" in out
    data = json.loads((tmp_path / "out.json").read_text())
    assert len(data["changed"]) == changed
    listed = an.evals.experiments(place)
    assert listed["kind"].tolist() == ["evaluation", "rescore"] and listed["note"][1] == "stricter"
    assert main(["rescore", "e-nothere", "--log", str(place)]) == 2
    assert "no experiment 'e-nothere'" in capsys.readouterr().err
