"""Issue 24's minor list, kernel side: Stop says stopped and partial, the summary never lags,
one figure, reloaded diffs whole, the Playground counts its own variant and diffs the
repeat that flipped, replay misses worded as replay misses."""

from __future__ import annotations

import agentnb as an
from agentnb import checks
from agentnb.widgets import EvalMatrix, Playground

WIDGET = "application/vnd.jupyter.widget-view+json"


def tasks(n=6):
    return an.TaskSet(list(an.travel.task_set())[:n])


async def test_stop_marks_the_matrix_stopped_and_the_summary_partial(comms):
    ev = an.evals.start({"a": an.travel.travel_agent()}, tasks(20), repeats=3, concurrency=1)
    EvalMatrix(ev, every=0.01)

    def stop_after_nine(record):
        if record is not None and len(ev.records) == 9:
            ev.cancel()

    ev.subscribe(stop_after_nine)
    await ev.wait()
    last = comms[-1].custom()[-1]
    assert last["done"] and last["stopped"] and last["finished"] == 9
    assert last["caption"].startswith("PARTIAL: stopped after 9 of 60 runs")
    assert ev.summary.attrs["partial"]


async def test_every_update_carries_the_summary_of_the_same_runs(comms):
    ev = an.evals.start({"a": an.travel.travel_agent()}, tasks(12), repeats=2, concurrency=2)
    EvalMatrix(ev, every=0.001)
    await ev.wait()
    updates = [m for m in comms[-1].custom() if m.get("op") == "cells"]
    assert len(updates) > 3
    for m in updates:  # the summary counted exactly the runs the matrix showed
        assert sum(row["n"] for row in m["summary"]) == m["finished"]


async def test_plot_leaves_one_figure_to_show():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ev = await an.evaluate({"a": an.travel.travel_agent()}, tasks(3))
    before = set(plt.get_fignums())
    fig = ev.plot()
    assert set(plt.get_fignums()) == before  # pyplot does not show it a second time
    assert fig.axes


async def test_a_reloaded_evaluations_trajectory_diff_is_whole(comms, tmp_path):
    base = an.travel.travel_agent()
    ev = await an.evaluate({"a": base, "b": base.copy()}, tasks(2))
    loaded = an.Evaluation.load(ev.save(tmp_path / "ev.jsonl"))
    task = ev.tasks.names[0]
    live = EvalMatrix(ev)._trajectory(task, 0).metrics
    back = EvalMatrix(loaded)._trajectory(task, 0).metrics
    assert back == live and back[0]["stop_reason"] == "final_answer" and back[0]["tokens"] > 0


async def test_the_playground_counts_its_variant_and_diffs_the_flipped_repeat(comms):
    flaky = an.travel.TravelModel("fabricate")

    agent = an.travel.travel_agent(model=flaky)
    pg = Playground(agent, tasks(3), repeats=2)
    await pg.run()
    comm = comms[-1]
    await pg.run(instructions=agent.instructions + "\n简洁。")
    progress = [m for m in comm.custom() if m.get("op") == "progress"]
    second = [m for m in progress if m["variant"] == "v1"]
    assert [m["finished"] for m in second] == list(range(1, 7))  # v0's 6 kept runs not counted
    assert all(m["total"] == 6 for m in second)
    running = [m for m in comm.custom() if m.get("op") == "running"][-1]
    assert running["total"] == 6
    # a flip on repeat 1 only: the diff shows repeat 1, where it flipped
    ev = pg.evaluation
    pg.comparison.flips[:] = [(ev.tasks.names[0], 1, "pass", "fail")]
    pg.comparison.regressed[:] = [ev.tasks.names[0]]
    pg._trajectories.clear()
    assert pg.flipped_repeat(ev.tasks.names[0]) == 1
    assert pg.flipped_diff(ev.tasks.names[0]).labels == ["v0 #1", "v1 #1"]


async def test_a_replay_miss_reaches_the_user_as_a_replay_miss():
    live = await an.evaluate({"a": an.travel.travel_agent()}, tasks(1))
    recording = an.ToolRecording.from_evaluation(live)
    other = an.TaskSet([an.Task("other", "周五北京天气怎么样？", checks=[checks.no_tool_errors()])])
    replayed = await an.evaluate({"a": an.travel.travel_agent().replaying(recording)}, other)
    record = replayed.records[0]
    assert "replay" in record.divergence and "上游服务出错" not in (record.output or "")
    assert "回放" in (record.output or ""), record.output


async def test_an_evaluation_shows_one_matrix_per_cell(comms, monkeypatch):
    """``ev = await an.evaluate(...)`` then ``ev`` in the same cell rendered two matrices."""
    import IPython
    import IPython.display

    class Shell:
        execution_count = 7

    shell = Shell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    shown = []

    updated = []

    class Handle:
        def update(self, data, raw=False):
            updated.append(data)

    def display(obj, raw=False, **options):  # as IPython does: the object's bundle, published
        shown.append(obj if raw else obj._repr_mimebundle_())
        return Handle()

    def matrices() -> list[str]:
        return [b[WIDGET]["model_id"] for b in shown if WIDGET in b]

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(an.display, "in_kernel", lambda: True)
    ev = await an.evaluate({"a": an.travel.travel_agent()}, tasks(2))
    assert len(shown) == 1 and len(matrices()) == 1  # the live matrix, shown while it ran
    # when it ended, the same matrix published again in place, its saved form the finished one
    assert len(updated) == 1 and updated[0][WIDGET] == shown[0][WIDGET]
    assert "2/2 runs done" in updated[0]["text/plain"]
    display(ev)  # `ev` at the end of the same cell: its line of text, not a second matrix
    assert len(matrices()) == 1 and shown[-1] == {"text/plain": repr(ev)}
    (matrix,) = [m for m in EvalMatrix._shown.values() if m[1].evaluation is ev]
    assert matrix[1].model_id == matrices()[0]
    shell.execution_count = 8  # the next cell shows it again
    display(ev)
    assert len(matrices()) == 2 and matrices()[0] != matrices()[1]
