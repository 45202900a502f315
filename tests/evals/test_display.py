"""How an evaluation shows: static HTML, the notebook hooks, plot() and diff()."""

from __future__ import annotations

import sys
import types

import pytest

import agentnb as an
from agentnb import checks
from agentnb.evals import EvalRecord


def small() -> an.Evaluation:
    records = [
        EvalRecord(v, t, r, o)
        for v, t, r, o in [
            ("a", "t<0>", 0, "pass"),
            ("a", "t<0>", 1, "fail"),
            ("a", "t1", 0, "error"),
            ("a", "t1", 1, "error"),
            ("b", "t<0>", 0, "pass"),
            ("b", "t<0>", 1, "pass"),
            ("b", "t1", 0, "fail"),
            ("b", "t1", 1, "fail"),
        ]
    ]
    return an.Evaluation.from_records(records)


def test_the_static_html_shows_the_summary_caption_and_an_escaped_grid():
    bundle = small()._repr_mimebundle_()
    html = bundle["text/html"]
    assert "t&lt;0&gt;" in html and "t<0>" not in html  # task names are data, not markup
    assert "1/2" in html and "2/2" in html and "0/2" in html  # k/k per cell with repeats
    assert "task-clustered bootstrap" in html and 'errors="fail"' in html.replace("&quot;", '"')
    assert "pass@2" in bundle["text/plain"]


def test_plot_draws_rates_with_intervals_and_the_grid():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    fig = small().plot()
    left, right = fig.axes[:2]
    assert [t.get_text() for t in left.get_yticklabels()] == ["a", "b"]
    assert [t.get_text() for t in right.get_xticklabels()] == ["a", "b"]
    grid = right.get_images()[0].get_array()
    assert grid[0][0] == 0.5 and grid[0][1] == 1.0 and grid[1][1] == 0.0
    import matplotlib.pyplot as plt

    plt.close(fig)


async def test_diff_asks_the_display_door_for_the_evaluation_s_diff_view(monkeypatch):
    ev = await an.evaluate(
        {
            "a": an.Agent(model=an.models.ScriptedModel(["x"])),
            "b": an.Agent(model=an.models.ScriptedModel(["y"])),
        },
        [an.Task("t", "q")],
    )
    seen = []
    fake = types.ModuleType("agentnb.widgets")
    fake.view = lambda obj, name, *args, **options: seen.append((obj, name, args)) or "diff"
    monkeypatch.setitem(sys.modules, "agentnb.widgets", fake)
    assert ev.diff("t") == "diff"  # through the display door: the view registered as "diff"
    assert seen == [(ev, "diff", ("t", None, 0))]


async def test_in_a_notebook_evaluate_shows_the_live_matrix_or_a_progress_line(monkeypatch, capsys):
    import IPython.display

    shown, updated = [], []

    class Handle:
        def update(self, data, raw=False):
            updated.append(data)

    def display(data, raw=False, display_id=False):
        shown.append((data, ev_now[0].done, len(ev_now[0].records)))
        return Handle()

    ev_now = []
    monkeypatch.setattr(an.display, "in_kernel", lambda: True)
    monkeypatch.setattr(IPython.display, "display", display)
    agent = an.Agent(model=an.models.ScriptedModel(["ok", "ok"]))
    task = an.Task("t", "q", checks=[checks.answer_contains("ok")])
    fake = types.ModuleType("agentnb.widgets")
    fake.has_view = lambda obj: True
    fake.bundle = lambda obj: ev_now.append(obj) or {"application/x-live": "matrix"}
    monkeypatch.setitem(sys.modules, "agentnb.widgets", fake)
    ev = await an.evaluate(agent, [task])
    # shown once, before any run finished: it fills in live; then its saved form made final
    assert [(data, done, n) for data, done, n in shown] == [
        ({"application/x-live": "matrix"}, False, 0)
    ]
    assert len(updated) == 1 and updated[0]["application/x-live"] == "matrix"
    assert "1/1 runs done" in updated[0]["text/plain"]
    assert ev.done and ev.records[0].outcome == "pass" and capsys.readouterr().err == ""
    fake.has_view = lambda obj: False  # no matrix: a static table would not fill in
    ev = await an.evaluate(agent, [task])
    assert len(shown) == 1 and "evaluate: 1/1 runs — 1 pass" in capsys.readouterr().err


def test_start_needs_a_running_loop_and_agents_need_models():
    with pytest.raises(an.RunStateError, match=r"asyncio\.run"):
        an.evals.start(an.Agent(model=an.models.ScriptedModel(["x"])), ["q"])
    with pytest.raises(an.ConfigurationError, match="have no model"):
        an.evals.start({"a": an.Agent()}, ["q"])


def test_the_evaluation_html_follows_the_one_character_rule():
    """A lone surrogate in a task or variant name (bytes decoded with surrogateescape) is
    shown as U+FFFD: the bundle is valid UTF-8, as every other static renderer's."""
    records = [EvalRecord("v\udcff", "t\ud800", 0, "pass"), EvalRecord("b", "t\ud800", 0, "fail")]
    ev = an.Evaluation.from_records(records)
    html = ev._repr_mimebundle_()["text/html"]
    html.encode("utf-8")  # raised UnicodeEncodeError before
    assert "v\ufffd" in html and "t\ufffd" in html
    comparison = ev.compare("v\udcff", "b")._repr_mimebundle_()["text/html"]
    comparison.encode("utf-8")


async def test_outputs_show_every_answer_task_by_variant_repeats_stacked():
    def reply(request):
        text = request.messages[-1]["content"]
        return "line one\nline two\nline three\nline four <b>" if "long" in text else "short"

    agent = an.Agent("Answer.\nBe polite.", model=an.models.FunctionModel(reply))
    terse = agent.copy(instructions="Answer.\nBe terse.")
    tasks = an.TaskSet(
        [
            an.Task("long", "long please", checks=[checks.answer_contains("four")]),
            an.Task("short", "short please", checks=[checks.answer_contains("four")]),
        ]
    )
    ev = await an.evaluate({"polite": agent, "terse": terse}, tasks, repeats=2)
    grid = ev.outputs()
    frame = grid.frame
    assert list(frame.columns) == ["polite", "terse"] and list(frame.index) == ["long", "short"]
    assert frame.loc["short", "terse"] == ["short", "short"]  # repeats stacked
    html = grid._repr_mimebundle_()["text/html"]
    assert "<details>" in html and "line four &lt;b&gt;" in html  # folded, escaped
    assert html.count("✗ #") == 4 and "answer_contains(&#x27;four&#x27;)" in html  # failed marked
    comparison = ev.compare("polite", "terse")
    rows = comparison.prompt_diff["instructions"]
    assert [r["op"] for r in rows] == ["same", "removed", "added"]
    assert [rows[2]["text"][a:b] for a, b in rows[2]["spans"]] == ["terse"]
    shown = comparison._repr_mimebundle_()["text/html"]
    assert "<mark>terse</mark>" in shown and "<mark>polite</mark>" in shown
