"""The experiment log (issue 41): every evaluation and optimisation recorded by default, listed,
reopened whole and compared across the log; the place chosen or switched off by one argument."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import agentnb as an
from agentnb.evals.log import ENV, LogWarning
from tests.evals import optimise_agents as toys
from tests.evals import tuning_agents as toy


def _head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


async def test_a_week_of_tuning_in_miniature(tmp_path: Path) -> None:
    """Three evaluations and one optimisation recorded; four rows with digests and commits; two
    experiments compared across the log as a fresh evaluation compares them; a rescore with an
    edited check changes the outcomes it should and calls no agent model."""
    log = an.evals.ExperimentLog(tmp_path / "week.sqlite")
    tasks = toy.tasks()
    monday = await an.evaluate({"polite": toy.polite()}, tasks, repeats=2, log=log, note="mon")
    tuesday = await an.evaluate({"terse": toy.terse()}, tasks, repeats=2, log=log, note="tue")
    fresh = await an.evaluate(toy.variants(), tasks, repeats=2, log=log, note="both")
    train, held = _hard_held_out()
    opt = await an.optimize(
        toys.toy(), train, validation=held, proposer=toys.careful(), budget=60, seed=0,
        progress=False, log=log, note="thursday",
    )  # fmt: skip
    assert opt.best.status == "promoted"

    listed = an.evals.experiments(log)
    assert list(listed["kind"]) == ["evaluation"] * 3 + ["optimisation"]
    assert list(listed["note"]) == ["mon", "tue", "both", "thursday"]
    assert set(listed["commit"]) == {_head()} and listed["dirty"].notna().all()
    assert listed["tasks_digest"][0] == listed["tasks_digest"][1] == listed["tasks_digest"][2]
    assert listed["tasks_digest"][3] != listed["tasks_digest"][0]
    digests = dict(d.split(":") for d in listed["variant_digests"][2].split(", "))
    assert digests["polite"] == listed["variant_digests"][0].split(":")[1]
    assert digests["terse"] != digests["polite"]
    rate = fresh.summary.loc["terse", "success_rate"]
    assert 0 < rate < 1 and listed["success"][2] == f"polite 100% · terse {rate:.0%}"

    across = an.evals.compare(monday.experiment.id, tuesday.experiment.id, log=log)
    same = fresh.compare("polite", "terse")
    assert across.verdict == same.verdict
    assert (across.p, across.improved, across.regressed, across.flips) == (
        same.p, same.improved, same.regressed, same.flips,
    )  # fmt: skip
    assert (across.ci_low, across.ci_high) == (same.ci_low, same.ci_high)
    assert across.prompt_diff == same.prompt_diff

    again = an.evals.experiment(fresh.experiment.id[:6], log)
    assert [r.outcome for r in again.records] == [r.outcome for r in fresh.records]
    toy.CALLS.clear()
    stricter = await again.rescore(checks=[an.checks.answer_contains("sunglasses")], log=log)
    assert toy.CALLS == []  # no agent model was called
    for r in stricter.records:
        assert r.outcome == ("pass" if "sunglasses" in (r.output or "") else "fail"), r
    assert [r.output for r in stricter.records] == [r.output for r in again.records]
    assert stricter.summary.loc["terse", "passed"] == 0  # the terse answers never say it
    assert stricter.summary.loc["polite", "passed"] == 16
    assert [r.outcome for r in again.records] == [r.outcome for r in fresh.records]  # untouched
    rows = an.evals.experiments(log)
    assert list(rows["kind"])[-1] == "rescore" and rows["source"].iloc[-1] == fresh.experiment.id

    reopened = an.evals.experiment(opt.evaluation.experiment.id, log)
    assert isinstance(reopened, an.evals.Optimisation)
    assert reopened.best_id == opt.best_id and len(reopened.candidates) == len(opt.candidates)
    assert len(reopened.evaluation.records) == len(opt.evaluation.records)


def _hard_held_out() -> tuple[an.TaskSet, an.TaskSet]:
    """The optimiser's toy with seven hard tasks held out: "Be careful." wins all seven."""

    def task(name: str) -> an.Task:
        kind = name.rstrip("0123456789")
        return an.Task(name, f"a {kind} task", [an.checks.answer_contains("ok")], tags=[kind])

    train = an.TaskSet([task(n) for n in ("easy1", "hard1", "hard2")])
    return train, an.TaskSet([task(f"hard{i}") for i in range(3, 10)])


async def test_the_default_place_is_the_working_directory_and_nothing_else_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV)
    assert an.evals.experiments().empty and os.listdir(tmp_path) == []  # reading creates nothing
    ev = await an.evaluate(toy.variants(), toy.tasks(3))
    made = sorted(os.listdir(tmp_path))
    assert made[0] == "agentnb-experiments.sqlite", made
    assert all(name.startswith("agentnb-experiments.sqlite") for name in made)
    assert an.evals.experiments()["id"].tolist() == [ev.experiment.id]
    await an.evaluate(toy.variants(), toy.tasks(3), log=False)  # opted out: one argument
    assert len(an.evals.experiments()) == 1
    monkeypatch.setenv(ENV, str(tmp_path / "elsewhere.sqlite"))
    await an.evaluate(toy.variants(), toy.tasks(3))
    assert len(an.evals.experiments()) == 1
    assert len(an.evals.experiments(tmp_path / "elsewhere.sqlite")) == 1


async def test_a_place_that_cannot_be_used_is_refused_before_any_run(tmp_path: Path) -> None:
    toy.CALLS.clear()
    with pytest.raises(an.ConfigurationError, match="is a folder"):
        await an.evaluate(toy.variants(), toy.tasks(2), log=tmp_path)
    with pytest.raises(an.ConfigurationError, match="a file path or a SQL store"):
        await an.evaluate(toy.variants(), toy.tasks(2), log=42)
    assert toy.CALLS == []


async def test_labels_and_flags_go_back_to_the_log(tmp_path: Path) -> None:
    log = an.evals.ExperimentLog(tmp_path / "labels.sqlite")
    ev = await an.evaluate(toy.variants(), toy.tasks(4), log=log)
    ev.label("terse", "city-0", 0, "fail", "no temperature")
    back = an.evals.experiment(ev.experiment.id, log)
    assert back.labels[["variant", "task", "verdict", "note"]].values.tolist() == [
        ["terse", "city-0", "fail", "no temperature"]
    ]
    back.label("polite", "city-1", 0, "pass")  # an experiment read back writes back too
    assert len(an.evals.experiment(ev.experiment.id, log).labels) == 2


async def test_a_check_the_log_cannot_keep_is_named_and_a_rescore_needing_it_refused(
    tmp_path: Path,
) -> None:
    log = an.evals.ExperimentLog(tmp_path / "unkept.sqlite")
    tasks = an.TaskSet(
        [an.Task("city-0", "Beijing weather?", checks=[lambda r: "sunny" in r.output])]
    )
    ev = await an.evaluate({"polite": toy.polite()}, tasks, log=log)
    assert ev.experiment.body["unkept"] == {"city-0": ["<lambda>"]}
    back = an.evals.experiment(ev.experiment.id, log)
    assert back.records[0].outcome == "pass"  # its result is kept on the run
    with pytest.raises(an.ConfigurationError, match=r"did not keep its checks \['<lambda>'\]"):
        await back.rescore(log=False)
    again = await back.rescore(checks=[an.checks.answer_contains("sunny")], log=False)
    assert again.records[0].outcome == "pass"


async def test_experiments_that_share_no_task_are_not_compared(tmp_path: Path) -> None:
    log = an.evals.ExperimentLog(tmp_path / "apart.sqlite")
    a = await an.evaluate({"polite": toy.polite()}, toy.tasks(2), log=log)
    other = an.TaskSet(
        [an.Task("city-0", "Beijing weather?", checks=[an.checks.answer_contains("°C")])]
    )
    b = await an.evaluate({"terse": toy.terse()}, other, log=log)
    with pytest.raises(
        an.ConfigurationError, match=r"share no task.*\['city-0'\] have the same names but differ"
    ):
        an.evals.compare(a.experiment.id, b.experiment.id, log=log)
    c = await an.evaluate(toy.variants(), toy.tasks(2), log=log)
    with pytest.raises(an.ConfigurationError, match="say which with baseline="):
        an.evals.compare(c.experiment.id, a.experiment.id, log=log)
    both = an.evals.joined(c.experiment.id, a.experiment.id, baseline="polite", log=log)
    assert both.variants == [f"{c.experiment.id}:polite", f"{a.experiment.id}:polite"]
    assert both.compare(*both.variants).verdict.startswith("no evidence of a difference")


async def test_a_log_that_fails_to_record_warns_and_keeps_the_evaluation(tmp_path: Path) -> None:
    log = an.evals.ExperimentLog(tmp_path / "closed.sqlite")
    log.close()
    with pytest.warns(LogWarning, match="could not record this evaluation"):
        ev = await an.evaluate(toy.variants(), toy.tasks(2), log=log)
    assert ev.experiment is None and len(ev.records) == 4


async def test_the_log_in_postgres_through_the_same_store(pg_url: str) -> None:
    from agentnb.storage.postgres import PostgresStore

    store = PostgresStore(pg_url)
    ev = await an.evaluate(toy.variants(), toy.tasks(3), repeats=2, log=store, note="pg")
    ev.label("terse", "city-2", 1, "fail", "terse")
    other = PostgresStore(pg_url)  # another connection: another worker
    listed = an.evals.experiments(other)
    assert listed["note"].tolist() == ["pg"] and listed["runs"].tolist() == [12]
    back = an.evals.experiment(ev.experiment.id, other)
    assert [r.outcome for r in back.records] == [r.outcome for r in ev.records]
    assert back.labels["note"].tolist() == ["terse"]
    assert back.compare("polite", "terse").verdict == ev.compare("polite", "terse").verdict
    assert ev.session("terse", "city-0").id in other.list()  # the runs' sessions, stored there


@pytest.fixture(scope="module")
def pg_admin():
    from tests.service import pgcluster as pg

    if not pg.available():
        pytest.fail("Postgres 15 is not installed: `make test` installs it (apt postgresql)")
    with pg.postgres() as url:
        yield url


@pytest.fixture
def pg_url(pg_admin: str) -> str:
    from tests.service import pgcluster as pg

    return pg.create_database(pg_admin, f"log{os.getpid()}{os.urandom(3).hex()}")
