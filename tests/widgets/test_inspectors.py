"""RequestInspector, SnapshotDiff and Timeline: what they would show, kernel side."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import agentnb as an
from agentnb.models.base import ModelRequest
from agentnb.widgets import RequestInspector, SessionView, SnapshotDiff, Timeline
from agentnb.widgets.inspectors import diff_payload, request_payload

REQUEST = "我周五从上海去北京出差，预算3000以内"
SYSTEM = {"role": "system", "content": "be brief"}


def user(text):
    return {"role": "user", "content": text}


async def test_request_inspector_shows_the_exact_request_and_its_budget(comms):
    session = an.Session()
    view = SessionView(session)
    agent = an.travel.travel_agent(context_window=8000, reply_reserve=1000)
    await agent.run(REQUEST, session=session)
    data = request_payload(session, 1, view=view)
    assert data["k"] == 1 and data["n"] == 5
    assert [m["w"] for m in data["messages"]] == session.requests[0].request.messages
    assert data["messages"][0]["w"]["role"] == "system"
    assert data["tools"][0]["name"] == "search_flights"
    budget = data["budget"]
    assert budget["context_window"] == 8000 and budget["reply_reserve"] == 1000
    assert budget["total"] == budget["instructions"] + budget["tools"] + budget["history"]
    inspector = view.inspect(-1)
    assert inspector.data["k"] == 5 and inspector.kind == "request"
    comms[-1].deliver({"op": "goto", "args": [2]})  # the browser's "previous" button
    assert inspector.data["k"] == 2
    # A request no view saw: the budget is the one assemble recorded, all the same.
    unseen = an.Session()
    await agent.run(REQUEST, session=unseen)
    late = RequestInspector(unseen, 2)
    assert late.data["budget"] == unseen.requests[1].budget
    assert late.data["budget"]["context_window"] == 8000 and late.data["policy"] == "drop_oldest"
    with pytest.raises(IndexError, match="calls 1 to 5"):
        request_payload(session, 9)


async def test_request_inspector_reads_the_budget_from_the_request_record(comms):
    """Bug: without ``view=``, the inspector said no view saw the request assembled (and
    recomputed the budget with another tokenizer). The budget now has one home: the
    session's RequestRecord, whoever watched."""
    session = an.Session()
    agent = an.travel.travel_agent(context_window=1500, reply_reserve=200)
    result = await agent.run(REQUEST, session=session)
    record = session.requests[1]
    assert record.run_id == session.runs[-1].run_id and record.iteration == 2
    inspector = RequestInspector(session, 2)  # no view anywhere
    assert inspector.data["budget"] == record.budget
    assert inspector.data["budget"]["context_window"] == 1500
    assert record.budget["reply_reserve"] == 200 and record.policy == "drop_oldest"
    events = [e for e in result.events if e.type == "RequestAssembled"]
    assert [e.budget for e in events] == [r.budget for r in session.requests]


def test_snapshot_diff_classifies_appended_dropped_edited_summarised(comms):
    a = ModelRequest([SYSTEM, user("1"), user("2"), user("3")], [], {"temperature": 0})
    b = ModelRequest([SYSTEM, user("1"), user("2 edited"), user("3"), user("4")], [], {})
    c = ModelRequest([SYSTEM, user("summary of 1-3"), user("4"), user("5")], [{"x": 1}], {})
    fake = SimpleNamespace(id="s", requests=[SimpleNamespace(request=r) for r in (a, b, c)])
    d = diff_payload(fake, 1, 2)
    ops = [r["op"] for r in d["rows"]]
    assert ops == ["kept", "edited", "kept", "appended"]
    assert d["rows"][1]["old"]["content"] == "2" and d["params_changed"] == {
        "temperature": [0, None]
    }
    d = diff_payload(fake, 2, 3)
    ops = [r["op"] for r in d["rows"]]
    assert ops.count("dropped") == 3 and "summarised" in ops and ops[-1] == "appended"
    assert d["tools_changed"] and not d["instructions_changed"]
    assert SnapshotDiff(fake).data["j"] == 2  # default: the last two calls


async def test_timeline_rows_from_a_result(comms):
    result = await an.travel.travel_agent().run(REQUEST, session=an.Session())
    rows = Timeline(result).rows
    assert rows[0]["type"] == "RunStarted" and rows[-1]["type"] == "RunStopped"
    finished = [r for r in rows if r["type"] == "ToolFinished"]
    assert len(finished) == 4 and all(r["ok"] and r["latency"] >= 0 for r in finished)
    assert any("tokens" in r for r in rows if r["type"] == "ModelResponded")


async def test_streamed_deltas_travel_but_are_not_kept(comms):
    session = an.Session()
    view = SessionView(session)
    model = an.models.ScriptedModel(["北京周五晴。" * 5], stream=True)
    await an.Agent("x", [], model=model).run("天气?", session=session)
    deltas = [m for m in comms[-1].custom() if m.get("e", {}).get("type") == "ModelDelta"]
    assert deltas and "".join(m["e"]["delta"] for m in deltas) == "北京周五晴。" * 5
    assert all(r["type"] != "ModelDelta" for r in view.state()["events"])


async def test_the_answer_format_is_shown_as_sent_with_what_strict_mode_changed():
    """Issue 40 item 6: the view shows the schema sent and the strict rewrite's notes."""
    from pydantic import BaseModel

    from agentnb.widgets.inspectors import request_payload
    from agentnb.widgets.requests import RequestsSeen

    class Trip(BaseModel):
        city: str
        nights: int = 1

    agent = an.Agent("p", model=an.models.ScriptedModel(['{"city": "x", "nights": 1}']),
                     output_type=Trip)  # fmt: skip
    session = an.Session()
    await agent.run("x", session=session)
    shown = request_payload(session, 1)["output"]
    assert shown["name"] == "Trip" and shown["strict"] is True
    assert shown["schema"] == agent.output.spec.schema
    assert (
        "$: optional 'nights' made required and nullable (null stands for 'left out')"
        in (shown["notes"])
    )
    assert RequestsSeen(session, agent).context["output"] == shown
    assert RequestsSeen(session, None).context["output"] == shown
