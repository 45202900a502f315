"""SessionView, kernel side: what it sends, what a late view sees, how runs end in it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import agentnb as an
from agentnb.widgets import SessionView, payload
from tests.helpers import eventually
from tests.widgets.browser_model import BrowserModel

REQUEST = "我周五从上海去北京出差，预算3000以内"


def wire_size(w: dict) -> int:
    return len(json.dumps(w, ensure_ascii=False, separators=(",", ":")).encode())


def text(n: int, i: int) -> str:
    return (f"消息 {i}: " + "天气晴，航班 MU5101 08:00 起飞。" * 40)[:n]


def test_one_small_message_per_append_whatever_the_history(comms):
    session = an.Session()
    # no timed refresh inside the burst: 2,001 appends can outlast the default 5 s on a loaded
    # machine, and the refresh due then is a second message (the throttle's own tests pin it)
    view = SessionView(session, refresh_every=3600)
    comm = comms[-1]
    costs = {}
    for i in range(2001):
        before = len(comm.sent)
        start = comm.nbytes(before)
        msg = session.append({"role": "user", "content": text(400, i)})
        assert len(comm.sent) == before + 1  # ONE message: no snapshot in a burst
        costs[i] = (comm.nbytes(before) - start, wire_size(msg.wire()))
    sent, own = costs[10]
    assert sent < own + 200  # the message plus a small envelope
    assert costs[2000][0] - costs[10][0] < 40  # O(message): the history does not matter
    view.refresh()  # and a snapshot still carries everything
    state = payload.unpack(view.snapshot)
    assert [m["w"] for m in state["messages"]] == session.wire()
    assert len(view.snapshot) < sum(wire_size(w) for w in session.wire()) / 3  # compressed


async def test_run_is_followed_live_and_the_snapshot_is_exact(comms):
    session = an.Session(id="trip-1")
    view = SessionView(session)
    comm = comms[-1]
    browser = BrowserModel(comm, view)
    agent = an.travel.travel_agent()
    result = await agent.run(REQUEST, session=session)
    ops = [m["op"] for m in comm.custom()]
    assert ops.count("append") == len(session) == 10
    seqs = [m["seq"] for m in comm.custom()]
    assert seqs == list(range(1, len(seqs) + 1))  # the view's own counter: no gaps
    browser.pump()
    assert browser.msgs == session.wire()
    state = payload.unpack(view.snapshot)  # refreshed at the run's end
    assert state["seq"] == view.seq
    assert [m["w"] for m in state["messages"]] == session.wire()
    assert [m["it"] for m in state["messages"]] == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5]
    assert [m["tok"] for m in state["messages"]] == [m.tokens for m in session.messages]
    assert state["status"]["reason"] == result.stop_reason == "final_answer"
    assert state["calls"] == 5 and state["new_since"] == 9
    assert [m["calls"] for m in comm.custom() if "calls" in m] == [1, 2, 3, 4, 5]
    assert [m["new_since"] for m in comm.custom() if "new_since" in m] == [1, 3, 5, 7, 9]
    names = [t["name"] for t in state["context"]["tools"]]
    assert names == ["search_flights", "search_weather", "search_hotels", "calculate_cost"]
    assert state["context"]["instructions"] == agent.instructions and state["context"]["tok"] > 0
    assert all(t["ok"] for t in state["tools"].values()) and len(state["tools"]) == 4
    assert view.trace()["type"].tolist()[0] == "RunStarted"


async def test_a_late_view_catches_up(comms):
    session = an.Session()
    view = SessionView(session, refresh_every=3600)
    comm = comms[-1]
    await an.travel.travel_agent().run(REQUEST, session=session)
    session.append({"role": "user", "content": "谢谢"})
    lost = len(comm.sent)  # a view that renders now missed all of these
    session.append({"role": "assistant", "content": "不客气"})
    browser = BrowserModel(comm, view, start=lost)  # got the first snapshot, then nothing
    browser.pump()  # the next message shows a gap: it asks for a snapshot
    browser.pump()
    assert browser.asked_sync == 1
    assert browser.msgs == session.wire()
    # A reloaded page says hello with its seq; a stale one gets a fresh snapshot.
    n = len(comm.updates("snapshot"))
    comm.deliver({"op": "hello", "seq": 0})
    assert len(comm.updates("snapshot")) == n + 1
    comm.deliver({"op": "hello", "seq": view.seq})
    assert len(comm.updates("snapshot")) == n + 1


def test_edits_travel_as_small_messages(comms):
    session = an.Session()
    view = SessionView(session)
    comm = comms[-1]
    browser = BrowserModel(comm, view)
    for i in range(6):
        session.append({"role": "user", "content": f"m{i}"})
    session.edit(1, content="edited")
    session.delete(2)
    session.truncate(4)
    browser.pump()
    assert browser.msgs == session.wire()
    assert [m["op"] for m in comm.custom()][-3:] == ["replace", "delete", "truncate"]
    # A repair is rare and structural: the view sends a reset and a snapshot.
    session.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    )
    session.append({"role": "user", "content": "next"})
    session.repair()
    browser.pump()
    assert browser.msgs == session.wire() and session.is_valid


def test_throttled_refresh(comms, monkeypatch):
    session = an.Session()
    view = SessionView(session, refresh_every=0)
    comm = comms[-1]
    session.append({"role": "user", "content": "a"})
    session.append({"role": "user", "content": "b"})
    assert len(comm.updates("snapshot")) == 2  # refresh_every=0: after every change
    slow = SessionView(session, refresh_every=3600)
    slow_comm = comms[-1]
    for i in range(50):
        session.append({"role": "user", "content": str(i)})
    assert slow_comm.updates("snapshot") == []  # no loop, inside the window: none
    assert slow._dirty
    slow.refresh()
    assert len(slow_comm.updates("snapshot")) == 1
    assert view.seq == 52


async def test_trailing_refresh_on_the_loop(comms):
    session = an.Session()
    view = SessionView(session, refresh_every=0.05)
    comm = comms[-1]
    session.append({"role": "user", "content": "a"})
    n = len(comm.updates("snapshot"))
    await eventually(lambda: len(comm.updates("snapshot")) > n)  # the trailing refresh
    assert len(comm.updates("snapshot")) == n + 1
    assert payload.unpack(view.snapshot)["seq"] == view.seq


def test_mimebundle_has_the_widget_and_escaped_html(comms):
    session = an.Session()
    session.append({"role": "user", "content": "<img src=x onerror=alert(1)><script>x()</script>"})
    bundle = an.widgets.bundle(session)
    assert "application/vnd.jupyter.widget-view+json" in bundle
    html = bundle["text/html"]
    assert "<img" not in html and "<script" not in html and "&lt;img" in html
    assert (
        an.widgets.bundle(session)["application/vnd.jupyter.widget-view+json"]
        == bundle["application/vnd.jupyter.widget-view+json"]
    )  # one widget per session, shown twice
    assert len(comms) == 2  # the view and its ipywidgets Layout
    mine = SessionView(an.Session())  # a view made by hand is the one a session shows
    shown = an.widgets.bundle(mine.session)["application/vnd.jupyter.widget-view+json"]
    assert shown["model_id"] == mine.model_id
    mine.close()  # closed: the session gets a new one
    shown = an.widgets.bundle(mine.session)["application/vnd.jupyter.widget-view+json"]
    assert shown["model_id"] != mine._model_id


def test_unknown_browser_messages_are_shown_not_swallowed(comms):
    view = SessionView(an.Session())
    comm = comms[-1]
    comm.deliver({"op": "nonsense"})
    errors = [m for m in comm.custom() if m["op"] == "error"]
    assert errors and "nonsense" in errors[0]["text"] and view.errors
    comm.deliver({"op": "step"})  # no agent bound
    assert "no agent" in view.errors[-1]


def test_import_agentnb_does_not_import_widgets():
    code = "import sys, agentnb; assert 'ipywidgets' not in sys.modules and 'anywidget' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_front_end_ships_beside_the_package():
    from agentnb.widgets import base

    assert "export default" in base.ESM and ".anb-card" in base.CSS
    sinks = r"\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function"
    assert re.search(sinks, base.ESM) is None  # text goes in as text nodes only


@pytest.mark.parametrize("kind", ["error", "max_iterations"])
async def test_runs_that_fail_or_stop_end_in_the_right_state(comms, kind):
    session = an.Session()
    view = SessionView(session)
    if kind == "error":
        model = an.models.FunctionModel(lambda request: 1 / 0)
        agent = an.Agent("x", [], model=model)
        with pytest.raises(an.AgentnbError):
            await agent.run("hi", session=session)
    else:
        call = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "nope", "arguments": "{}"}}
            ],
        }
        model = an.models.FunctionModel(lambda request: call)
        agent = an.Agent("x", [], model=model, max_iterations=1, repeat_limit=0)
        await agent.run("hi", session=session)
    status = payload.unpack(view.snapshot)["status"]
    assert status["state"] == "stopped" and status["reason"] == kind
    assert [m["w"] for m in payload.unpack(view.snapshot)["messages"]] == session.wire()


def test_a_long_session_shown_through_the_live_view_saves_its_end(comms):
    """Bug: the live view's saved copy kept the *first* 500 messages while Session's own
    static HTML kept the last 500. One renderer now: the last messages, numbered as in the
    session, saying how many earlier ones are hidden."""
    session = an.Session([{"role": "user", "content": f"m{i}"} for i in range(600)])
    view = SessionView(session)
    data, _ = view._repr_mimebundle_()
    html, text = data["text/html"], data["text/plain"]
    assert "m599" in html and "#599" in html and ">m0<" not in html
    assert "100 earlier messages not shown" in html and "100 earlier messages not shown" in text
    assert html == session.static_mimebundle()["text/html"]


async def test_in_a_kernel_the_display_door_shows_each_registered_view(comms, monkeypatch):
    """display.bundle: a session, an evaluation and an optimisation show their live view with
    their static form beside it (valid UTF-8); a run's result, with no view registered, its
    static form; a proxy or a runtime only when asked (.view())."""
    from agentnb.evals.optimise import Optimisation

    monkeypatch.setattr(an.display, "in_kernel", lambda: True)
    widget = "application/vnd.jupyter.widget-view+json"
    session = an.Session()
    result = await an.Agent(model=an.models.ScriptedModel(["ok\udcff"])).run("hi", session=session)
    ev = an.Evaluation.from_records([an.evals.EvalRecord("v\udcff", "t", 0, "pass")])
    tasks = an.TaskSet([an.Task("a", "q")])
    opt = Optimisation(None, tasks, an.TaskSet([an.Task("b", "q")]))
    for obj, view in [(session, SessionView), (ev, an.widgets.EvalMatrix),
                      (opt, an.widgets.OptimiseView)]:  # fmt: skip
        bundle = obj._repr_mimebundle_()
        assert bundle[widget]["model_id"] in {c.comm_id for c in comms}
        assert bundle["text/html"] == obj.static_bundle()["text/html"]
        assert all(isinstance(v, dict) or v.encode("utf-8") for v in bundle.values())
        assert isinstance(an.display.view(obj), view) and an.display.has_view(obj)
    assert result._repr_mimebundle_() == result.static_bundle()
    assert not an.display.has_view(result)
    with pytest.raises(TypeError, match="no view 'view' of a RunResult"):
        an.display.view(result)
    with pytest.raises(TypeError, match=r"no view 'nope' of a Session \(its views: \['view'\]\)"):
        an.display.view(session, "nope")
