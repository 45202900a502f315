"""The evaluation views over a recording comm: the live matrix, the trajectory diff, the
playground (what each would send to the browser, and what it answers)."""

from __future__ import annotations

import asyncio

import agentnb as an
from agentnb.travel import INSTRUCTIONS, TravelModel
from agentnb.widgets import EvalMatrix, Playground, TrajectoryDiff

TOOLS_FIRST = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\n"


def tasks(n=6):
    return an.TaskSet(list(an.travel.task_set())[:n])


def variants():
    base = an.travel.travel_agent()
    return {
        "article": base,
        "no_tools_rule": base.copy(
            instructions=INSTRUCTIONS.replace(TOOLS_FIRST, ""), model=TravelModel("fabricate")
        ),
    }


async def test_the_matrix_fills_in_with_batched_cell_updates(comms):
    ts = tasks()
    ev = an.evals.start(variants(), ts, repeats=2)
    matrix = EvalMatrix(ev, every=0.05)
    comm = comms[-1]
    assert matrix.data["finished"] == 0 and matrix.data["total"] == 2 * len(ts) * 2
    await ev.wait()
    msgs = comm.custom()
    cells = [m for m in msgs if m["op"] == "cells"]
    assert cells and cells[-1]["done"] and cells[-1]["finished"] == ev.total
    assert len(cells) < ev.total, "updates are batched, not one per run"
    seen = {}
    for m in cells:
        seen.update(m["cells"])
    final = matrix.cells()
    assert {k: v for k, v in seen.items()} == {
        f"{t}\u0000{v}": final[t][v] for t in final for v in final[t]
    }
    assert sum(sum(c) for c in seen.values()) == ev.total
    assert cells[-1]["summary"][0]["variant"] == "article"
    assert matrix.data["done"] and matrix.data["summary"]  # the saved notebook's copy
    per_run = matrix.sent_bytes / ev.total
    assert per_run < 1500, per_run


async def test_a_click_opens_the_run_and_the_diff_and_stop_cancels(comms):
    ts = tasks(3)
    ev = await an.evaluate(variants(), ts, progress=False)
    EvalMatrix(ev)
    comm = comms[-1]
    task = ts.names[0]
    comm.deliver({"op": "open", "task": task, "variant": "no_tools_rule", "repeat": 0, "id": "1"})
    reply = [m for m in comm.custom() if m.get("op") == "reply"][-1]["data"]
    assert reply["outcome"] == ev.record("no_tools_rule", task).outcome
    assert reply["messages"][0]["w"]["role"] in ("system", "user")
    assert any(not c["passed"] for c in reply["checks"]) == (reply["outcome"] == "fail")
    comm.deliver({"op": "diff", "task": task, "id": "2"})
    diff = [m for m in comm.custom() if m.get("op") == "reply"][-1]["data"]
    assert diff["labels"] == ["article", "no_tools_rule"] and diff["first"] == 0
    comm.deliver({"op": "step", "task": task, "row": 0, "a": 0, "b": 1, "id": "3"})
    step = [m for m in comm.custom() if m.get("op") == "reply"][-1]["data"]
    assert any(r["op"] == "edited" for r in step["request"])
    # Stop cancels a running sweep
    running = an.evals.start(variants(), tasks(20), repeats=3, concurrency=1)
    live = EvalMatrix(running)
    comms[-1].deliver({"op": "stop"})
    await running.wait()
    assert running.cancelled and len(running.records) < running.total
    assert comms[-1].custom()[-1]["done"]
    live.close()


async def test_a_reloaded_evaluation_shows_its_matrix_with_no_model(comms, tmp_path):
    ev = await an.evaluate(variants(), tasks(3), progress=False)
    path = ev.save(tmp_path / "ev.jsonl")
    loaded = an.Evaluation.load(path)
    matrix = EvalMatrix(loaded)
    assert matrix.data["done"] and matrix.cells() == EvalMatrix(ev).cells()
    data, _ = matrix._repr_mimebundle_()
    assert "article" in data["text/html"]


async def test_trajectory_diff_widget_answers_a_step(comms):
    ev = await an.evaluate(variants(), tasks(2), progress=False)
    task = ev.tasks.names[0]
    view = ev.diff(task)
    assert isinstance(view, TrajectoryDiff) and view.data["labels"] == ev.variants
    assert view.trajectory.sessions == [ev.session(v, task) for v in ev.variants]
    assert view.trajectory.metrics[0]["stop_reason"] == ev.record(ev.variants[0], task).stop_reason
    assert view.first_divergence == 0
    one = ev.diff(task, variants=ev.variants[::-1])
    assert one.trajectory.labels == ev.variants[::-1]
    comms[-1].deliver({"op": "step", "row": 0, "id": "9"})
    reply = comms[-1].custom()[-1]
    assert reply["op"] == "reply" and reply["data"]["row"] == 0


async def test_the_playground_runs_each_edit_as_a_variant_and_compares(comms):
    agent = an.travel.travel_agent(model=TravelModel("fabricate"))
    pg = Playground(agent, tasks(6))
    comm = comms[-1]
    assert pg.data["instructions"] == INSTRUCTIONS and pg.data["rules"]
    first = await pg.run()
    assert list(pg.variants) == ["v0"] and pg.comparison is None
    second = await pg.run(instructions=INSTRUCTIONS.replace(TOOLS_FIRST, ""))
    assert list(pg.variants) == ["v0", "v1"] and second.variants == ["v0", "v1"]
    # v0's runs were kept, not run again
    assert [r for r in second.records if r.variant == "v0"] == first.records
    c = pg.comparison
    assert c is not None and c.baseline == "v0" and c.other == "v1"
    assert c.regressed, "without the tools-first rule the fabricating stand-in fails tasks"
    result = [m for m in comm.custom() if m.get("op") == "result"][-1]
    assert result["comparison"]["regressed"] == c.regressed
    comm.deliver({"op": "diff", "task": c.regressed[0], "id": "d"})
    diff = comm.custom()[-1]["data"]
    assert diff["labels"] == ["v0", "v1"]


async def test_the_playground_s_text_areas_follow_a_run_started_from_code(comms):
    """Issue 36: after ``await pg.run(instructions=X)`` the text areas kept v0, so the next
    browser Run sent v0's text and the diff credited the user with lines never typed."""
    agent = an.travel.travel_agent(model=TravelModel("fabricate"))
    pg = Playground(agent, tasks(4))
    comm = comms[-1]
    await pg.run()
    edited = INSTRUCTIONS.replace(TOOLS_FIRST, "")
    hotels = "推荐最便宜的酒店。"
    await pg.run(instructions=edited, descriptions={"search_hotels": hotels})
    running = [m for m in comm.custom() if m.get("op") == "running"][-1]
    assert running["variant"] == "v1" and running["texts"]["instructions"] == edited
    # the trait a view (also one displayed later) fills its text areas from: v1's texts
    assert pg.data["instructions"] == edited and pg.latest() is pg.variants["v1"]
    shown = {t["name"]: t["description"] for t in pg.data["tools"]}
    assert shown["search_hotels"] == hotels
    # the browser sends what its text areas show: v1's texts, so v2 changes nothing
    comm.deliver({"op": "run", "instructions": pg.data["instructions"], "tools": shown})
    await pg._task
    assert list(pg.variants) == ["v0", "v1", "v2"] and pg.comparison.prompt_diff == {}
    assert "every pair agreed" in pg.comparison.verdict
    result = [m for m in comm.custom() if m.get("op") == "result"][-1]["comparison"]
    assert result["verdict"] == pg.comparison.verdict and result["method"].startswith("exact test")


async def test_the_playground_runs_from_the_browser_in_the_background(comms):
    agent = an.travel.travel_agent()
    pg = Playground(agent, tasks(10), repeats=2)
    comm = comms[-1]
    comm.deliver({"op": "run", "instructions": agent.instructions, "tools": {}})
    await asyncio.sleep(0)  # the sweep runs as a task: the handler returned at once
    assert pg._task is not None and not pg._task.done()
    comm.deliver({"op": "stop"})
    await pg._task
    result = [m for m in comm.custom() if m.get("op") == "result"][-1]
    assert result["cancelled"] and not pg.errors and pg.variants == {}
    comm.deliver({"op": "run", "instructions": agent.instructions, "tools": {}})
    await pg._task
    edited = {"search_hotels": "推荐最便宜的酒店。Search hotels; recommend the cheapest first."}
    comm.deliver({"op": "run", "instructions": agent.instructions, "tools": edited})
    await pg._task
    assert list(pg.variants) == ["v0", "v1"]
    hotels = next(t for t in pg.variants["v1"].tools if t.name == "search_hotels")
    assert hotels.description == edited["search_hotels"]


async def test_a_sweep_of_runs_that_never_suspend_still_lets_the_loop_in(comms):
    """Bug: with the stand-in and instant tools no run suspends, so one worker ran the whole
    sweep without giving the loop a turn: the matrix got no update until the end and a Stop
    click could not be handled. Each finished run now yields."""
    ev = an.evals.start(variants(), tasks(20), repeats=3)
    EvalMatrix(ev, every=0.01)
    loop = asyncio.get_running_loop()
    clicks: list[object] = []

    def first_run_done(record):
        if record is not None and not clicks:
            clicks.append(loop.call_soon(ev.cancel))  # Stop, handled when the loop gets a turn

    ev.subscribe(first_run_done)
    await ev.wait()
    assert ev.cancelled and len(ev.records) < ev.total / 2, len(ev.records)
