"""The output grid's labels and the experiment log's view, kernel side (issue 41): a click in
the grid labels the run (and the log), the view opens two experiments side by side or says why
not; every text sendable whatever a model wrote."""

from __future__ import annotations

from pathlib import Path

import agentnb as an
from agentnb.widgets import ExperimentsView, OutputsGrid
from tests.evals import tuning_agents as toy


async def test_a_click_in_the_grid_labels_the_run_and_the_log(comms, tmp_path: Path) -> None:
    log = an.evals.ExperimentLog(tmp_path / "log.sqlite")
    ev = await an.evaluate(toy.variants(), toy.tasks(2), log=log)
    grid = OutputsGrid(ev.outputs())
    cells = grid.data["cells"]["city-1"]
    assert [c["outcome"] for c in cells["terse"]] == [ev.record("terse", "city-1").outcome]
    comms[-1].deliver({"op": "label", "id": "1", "variant": "terse", "task": "city-1",
                       "repeat": 0, "verdict": "fail", "note": "too short \ud800"})  # fmt: skip
    reply = comms[-1].custom()[-1]
    assert reply["op"] == "reply" and reply["data"]["cell"]["labels"]["human"]["verdict"] == "fail"
    assert reply["data"]["cell"]["labels"]["human"]["note"] == "too short \ufffd"  # sendable
    assert grid.data["cells"]["city-1"]["terse"][0]["labels"]["human"]["verdict"] == "fail"
    back = an.evals.experiment(ev.experiment.id, log)
    assert back.labels["note"].tolist() == ["too short \ud800"]  # the data as written


async def test_the_log_view_lists_and_opens_two_side_by_side(comms, tmp_path: Path) -> None:
    log = an.evals.ExperimentLog(tmp_path / "log.sqlite")
    a = await an.evaluate({"polite": toy.polite()}, toy.tasks(3), log=log, note="a")
    b = await an.evaluate({"terse": toy.terse()}, toy.tasks(3), log=log, note="b")
    view = ExperimentsView(log)
    assert [r["note"] for r in view.data["rows"]] == ["a", "b"]
    comms[-1].deliver({"op": "open", "id": "2", "a": a.experiment.id, "b": b.experiment.id,
                       "va": "polite", "vb": "terse"})  # fmt: skip
    opened = comms[-1].custom()[-1]["data"]
    same = an.evals.compare(a.experiment.id, b.experiment.id, log=log)
    assert opened["verdict"] == same.verdict and opened["prompt_diff"] == same.prompt_diff
    assert opened["grid"]["variants"] == ["polite", "terse"] and not opened["grid"]["labelling"]
    comms[-1].deliver({"op": "open", "id": "3", "a": a.experiment.id, "b": "e-none",
                       "va": "polite", "vb": "terse"})  # fmt: skip
    assert "no experiment 'e-none'" in comms[-1].custom()[-1]["data"]["error"]
    assert ExperimentsView(tmp_path / "nothing.sqlite").data["rows"] == []


def test_nothing_is_created_to_show_an_empty_default_log(comms, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTNB_LOG")
    assert ExperimentsView().data == {"rows": [], "where": "no log here yet"}
    assert list(tmp_path.iterdir()) == []
