"""The glass box shows what happened: edits, the run's real state, grounding, tracebacks."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import agentnb as an
from agentnb.widgets import SessionView, Timeline, payload
from agentnb.widgets.inspectors import diff_payload
from tests.helpers import eventually
from tests.widgets.browser_model import BrowserModel

REQUEST = "我周五从上海去北京出差，预算3000以内"


def slow_agent(delay: float = 0.05) -> an.Agent:
    inner = an.travel.TravelModel()

    async def think(request):
        await asyncio.sleep(delay)
        return await inner.complete(request)

    return an.travel.travel_agent(model=an.models.FunctionModel(think, name="slow"))


# -- edits are visible ----------------------------------------------------------------------
async def test_an_edited_result_is_marked_in_the_live_message_the_snapshot_and_the_timeline(
    comms,
):
    session = an.Session()
    view = SessionView(session)
    comm = comms[-1]
    browser = BrowserModel(comm, view)
    await an.travel.travel_agent().run(REQUEST, session=session)
    call_id = session.messages[1].tool_calls[0].id
    old = json.loads(session.messages[2].text)
    session.edit_result(call_id, {**old, "flights": old["flights"][:1]})
    (live,) = [m for m in comm.custom() if m["op"] == "replace"]
    ed = live["m"]["ed"]
    assert ed["how"] == "edit_result" and ed["call"] == call_id
    assert ed["changed"][0].startswith("content.flights[1]")
    assert json.loads(ed["before"]["content"]) == old  # what the tool really returned
    assert live["e"]["type"] == "SessionEdited" and "edit_result #2" in live["e"]["summary"]
    browser.pump()
    assert browser.msgs == session.wire()
    view.refresh()
    state = payload.unpack(view.snapshot)
    assert state["messages"][2]["ed"]["seq"] == session.edits[-1].seq
    assert "ed" not in state["messages"][1]
    # The timeline lists the edit, and its seq numbers have no gap where it happened.
    rows = Timeline(view).rows
    edit_rows = [r for r in rows if r["type"] == "SessionEdited"]
    assert len(edit_rows) == 1 and edit_rows[0]["seq"] == session.edits[-1].seq
    seqs = [r["seq"] for r in rows]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


async def test_hand_appends_are_timeline_rows_too(comms):
    session = an.Session()
    view = SessionView(session)
    session.append({"role": "user", "content": "hi"})
    (msg,) = [m for m in comms[-1].custom() if m["op"] == "append"]
    assert msg["st"] == "edit" and "run" not in msg
    assert view.trace()["summary"].tolist() == ["+ #0 user (appended by hand)"]


async def test_a_diff_attributes_an_edited_result_to_the_edit_not_the_tool(comms):
    session = an.Session()
    agent = an.travel.travel_agent()
    run = agent.start(REQUEST, session=session)
    while len(session.requests) < 2:  # after call 1's tool result, before call 2 is sent
        if run.next_stage == "assemble" and len(session) == 3:
            call_id = session.messages[1].tool_calls[0].id
            body = json.loads(session.messages[2].text)
            body["flights"][0]["price"] = 1
            session.edit_result(call_id, body)
        await run.step()
    await run.finish()
    diff = diff_payload(session, 1, 2)
    appended = [r for r in diff["rows"] if r["op"] == "appended"]
    by_edit = [r for r in appended if "edit" in r]
    assert len(by_edit) == 1 and by_edit[0]["w"]["role"] == "tool"
    mark = by_edit[0]["edit"]
    assert mark["how"] == "edit_result" and mark["changed"] == ["content.flights[0].price"]
    assert json.loads(mark["before"]["content"])["flights"][0]["price"] != 1
    assert all("edit" not in r for r in appended if r["w"]["role"] == "assistant")


def test_an_in_place_edit_between_two_requests_lists_the_changed_keys():
    session = an.Session([{"role": "user", "content": "q"}])
    model = an.models.ScriptedModel(["a1", "a2"])
    agent = an.Agent(model=model)
    agent.run_sync(None, session=session)
    session.append({"role": "user", "content": "q2"})
    session.edit(0, content="q (edited)")
    agent.run_sync(None, session=session)
    rows = diff_payload(session, 1, 2)["rows"]
    (edited,) = [r for r in rows if r["op"] == "edited"]
    assert edited["changed"] == ["content"] and edited["edit"]["how"] == "edit"


# -- the status matches the run, whoever drives it ------------------------------------------
async def test_a_run_stepped_from_code_reads_paused_and_the_view_continues_it(comms):
    session = an.Session()
    agent = an.travel.travel_agent()
    view = SessionView(session, agent=agent)
    comm = comms[-1]
    run = agent.start(REQUEST, session=session)
    for _ in range(4):  # restore, assemble, call_model, decide
        await run.step()
    await asyncio.sleep(0)  # the view reads the hold once the step has returned
    assert view.status["state"] == "paused" and view.status["next"] == "execute_tools"
    comm.deliver({"op": "step"})  # one driver: the view's Step drives the same run
    await view.driver.task
    assert view.driver.run is run and view.status["next"] == "check_stop"
    comm.deliver({"op": "run"})
    await view.driver.task
    assert run.done and view.status["state"] == "stopped"
    assert view.status["reason"] == "final_answer"
    assert [m for m in comm.custom() if m["op"] == "error"] == [] and view.errors == []
    assert len(session.runs) == 1 and session.is_valid


async def test_a_run_driven_elsewhere_is_not_driven_twice_but_stop_reaches_it(comms):
    session = an.Session()
    agent = slow_agent(0.05)
    view = SessionView(session, agent=agent)
    comm = comms[-1]
    task = asyncio.ensure_future(agent.run(REQUEST, session=session))
    await eventually(lambda: session.active_run is not None and session.active_run.driving)
    comm.deliver({"op": "run"})
    assert view.driver.task is None and "driven elsewhere" in view.status["note"]
    assert view.errors == []
    comm.deliver({"op": "stop"})
    result = await task
    assert result.stop_reason == "cancelled" and session.is_valid
    await asyncio.sleep(0)
    assert view.status["state"] == "stopped"


async def test_an_error_in_the_view_clears_when_the_next_action_succeeds(comms):
    session = an.Session()
    view = SessionView(session, agent=an.travel.travel_agent())
    comm = comms[-1]
    comm.deliver({"op": "bogus"})
    assert [m["op"] for m in comm.custom()] == ["error"] and len(view.errors) == 1
    comm.deliver({"op": "run", "text": REQUEST})
    await view.driver.task
    ops = [m["op"] for m in comm.custom()]
    assert "clear_errors" in ops and ops.index("clear_errors") > ops.index("error")
    assert view.status["reason"] == "final_answer"
    comm.deliver({"op": "run", "text": REQUEST})  # nothing to clear: nothing sent
    await view.driver.task
    assert [m["op"] for m in comm.custom()].count("clear_errors") == 1


async def test_a_run_with_a_wrap_up_call_reports_iterations_past_the_limit(comms):
    """The status carries iteration 3 of max 2: the view words it "wrap-up after 2"."""
    session = an.Session()
    model = an.travel.TravelModel(misbehave="loop")
    agent = an.travel.travel_agent(model=model, max_iterations=2, final_answer_on_stop=True)
    view = SessionView(session, agent=agent)
    await agent.run(REQUEST, session=session)
    assert view.status["max_iterations"] == 2 and view.status["iteration"] == 3


# -- grounding, tracebacks ------------------------------------------------------------------
async def test_a_fabricated_answer_is_flagged_in_the_view(comms):
    session = an.Session()
    view = SessionView(session)
    await an.Agent(model=an.travel.TravelModel(misbehave="fabricate")).run(REQUEST, session=session)
    state = payload.unpack(view.snapshot)
    assert state["ground"]["i"] == len(session) - 1
    assert "CA1234" in state["ground"]["figures"]
    assert any("ground" in m for m in comms[-1].custom())
    session.append({"role": "user", "content": "thanks"})  # no final answer at the end now
    assert comms[-1].custom()[-1]["ground"] is None
    honest = an.Session()
    SessionView(honest)
    await an.travel.travel_agent().run(REQUEST, session=honest)
    assert payload.unpack(SessionView.of(honest).snapshot)["ground"]["figures"] == []


def test_a_tool_traceback_rides_on_the_result_card():
    event = SimpleNamespace(ok=False, kind="tool_error", latency=0.0123,
                            traceback='File "my_tools.py", line 3, in f\nZeroDivisionError')  # fmt: skip
    stat = payload.tool_stat(event)
    assert stat == {"ok": False, "kind": "tool_error", "ms": 12.3, "tb": event.traceback}
    assert "tb" not in payload.tool_stat(SimpleNamespace(ok=True, kind=None, latency=0.001))


def test_a_tool_note_and_a_sub_session_ride_on_the_result_card():
    sub = an.Session([{"role": "user", "content": "示例城A 五一会下雨吗？"},
                      {"role": "assistant", "content": "降雨概率 0.8，带伞"}], id="p.c1")  # fmt: skip
    parent = an.Session()
    parent.__dict__.setdefault("subsessions", {})["p.c1"] = sub
    event = SimpleNamespace(ok=True, kind=None, latency=0.5, note="sent as str()",
                            subsession_id="p.c1")  # fmt: skip
    stat = payload.tool_stat(event, parent)
    assert stat["note"] == "sent as str()"
    assert stat["sub"]["id"] == "p.c1" and [m["w"] for m in stat["sub"]["messages"]] == sub.wire()
    lost = payload.tool_stat(SimpleNamespace(ok=True, kind=None, latency=0, subsession_id="x"))
    assert lost["sub"] == {"id": "x", "messages": [], "missing": True}


async def test_a_sub_agent_session_is_nested_in_the_parents_view(comms):
    if not hasattr(an.Agent, "as_tool"):
        import pytest

        pytest.skip("agent.as_tool lands with the tools branch")
    from tests.helpers import call, calls

    sub = an.Agent("你只查天气。", model=an.models.ScriptedModel(["示例城A 降雨概率 0.8，带伞"]),
                   name="weather")  # fmt: skip
    parent_model = an.models.ScriptedModel([
        calls(call("p1", "ask_weather", task="示例城A 五一会下雨吗？")),
        {"role": "assistant", "content": "要带伞"},
    ])  # fmt: skip
    parent = an.Agent("旅行助手", tools=[sub.as_tool("ask_weather", "天气子任务")],
                      model=parent_model)  # fmt: skip
    session = an.Session()
    view = SessionView(session)
    await parent.run("五一去示例城A要带伞吗", session=session)
    (finished,) = [m for m in comms[-1].custom() if m.get("e", {}).get("type") == "ToolFinished"]
    nested = finished["sub"]
    assert nested["id"] in session.subsessions and nested["stop_reason"] == "final_answer"
    assert nested["messages"][-1]["w"]["content"] == "示例城A 降雨概率 0.8，带伞"
    assert payload.unpack(view.snapshot)["tools"]["p1"]["sub"] == nested


async def test_stop_from_the_view_ends_a_run_paused_in_code(comms):
    session = an.Session()
    agent = an.travel.travel_agent()
    view = SessionView(session, agent=agent)
    run = agent.start(REQUEST, session=session)
    for _ in range(4):
        await run.step()
    comms[-1].deliver({"op": "stop"})
    assert run.done and run.stop_reason == "cancelled" and session.is_valid
    await asyncio.sleep(0)
    assert view.status["state"] == "stopped" and view.status["reason"] == "cancelled"
    assert session.active_run is None


def test_answers_appended_by_hand_are_checked_once_by_the_snapshot(comms, monkeypatch):
    """Grounding reads the whole session: never once per append (that was O(n^2))."""
    from agentnb.widgets import marks

    calls = []
    real = marks.ungrounded_figures
    monkeypatch.setattr(marks, "ungrounded_figures", lambda s: calls.append(1) or real(s))
    session = an.Session()
    view = SessionView(session, refresh_every=3600)
    for i in range(201):  # ends in an assistant answer
        session.append({"role": "user" if i % 2 else "assistant", "content": f"CA{1000 + i}"})
    assert calls == []
    view.refresh()
    assert len(calls) == 1 and payload.unpack(view.snapshot)["ground"] == {
        "i": 200,
        "figures": ["CA1200"],
    }
