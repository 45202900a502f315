"""Hand edits leave a trace: session.edit_call / edit_result, the EditRecord, SessionEdited."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb.session.edits import changed_paths
from tests.helpers import call, calls

REQUEST = "我周五从上海去北京出差，预算3000以内"


def tool_session() -> an.Session:
    return an.Session([
        {"role": "user", "content": "北京周五天气？"},
        calls(call("c1", "search_weather", city="上海", date="周五")),
        {"role": "tool", "tool_call_id": "c1", "name": "search_weather",
         "content": json.dumps({"city": "上海", "condition": "晴", "temp_max_c": 5})},
    ])  # fmt: skip


def test_edit_result_replaces_the_result_and_records_what_changed():
    session = tool_session()
    seen = []
    session.subscribe(seen.append)
    message = session.edit_result("c1", {"city": "北京", "condition": "晴", "temp_max_c": 5})
    assert session.messages[2] is message and json.loads(message.text)["city"] == "北京"
    record = session.edits[-1]
    assert record.how == "edit_result" and record.call_id == "c1" and record.index == 2
    assert record.changed == ("content.city",)
    assert json.loads(record.before["content"])["city"] == "上海"
    assert session.edit_of(message) is record and session.edit_of(session.messages[0]) is None
    (event,) = [e for e in seen if e.type == "SessionEdited"]
    assert event.seq == record.seq and event.how == "edit_result"
    assert event.changed == record.changed and event.before is record.before
    assert "edit_result #2 (call c1): changed content.city" in event.summary()
    assert session.is_valid


def test_edit_call_takes_a_dict_and_keeps_the_other_calls():
    session = an.Session([
        {"role": "user", "content": "q"},
        calls(call("a", "search_weather", city="上海", date="周五"), call("b", "search_hotels")),
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "tool", "tool_call_id": "b", "content": "y"},
    ])  # fmt: skip
    session.edit_call("a", arguments={"city": "北京", "date": "周五"})
    wire = session.messages[1].wire()
    assert json.loads(wire["tool_calls"][0]["function"]["arguments"]) == {
        "city": "北京",
        "date": "周五",
    }
    assert wire["tool_calls"][1] == call("b", "search_hotels")
    assert session.edits[-1].changed == ("tool_calls[0].function.arguments.city",)
    session.edit_call("b", name="search_flights")
    assert session.messages[1].tool_calls[1].function.name == "search_flights"
    assert [r.how for r in session.edits] == ["edit_call", "edit_call"]


def test_edits_of_unknown_calls_and_unserialisable_content_change_nothing():
    session = tool_session()
    before = session.wire()
    with pytest.raises(an.InvalidMessage, match=r"no tool message answers the call 'nope'.*'c1'"):
        session.edit_result("nope", "x")
    with pytest.raises(an.InvalidMessage, match="no assistant message makes the tool call"):
        session.edit_call("nope", arguments={})
    with pytest.raises(an.InvalidMessage, match="not JSON-serialisable"):
        session.edit_result("c1", {"x": object()})
    assert session.wire() == before and session.edits == []


def test_every_edit_method_leaves_a_record():
    session = tool_session()
    session.append({"role": "assistant", "content": "晴"})
    session.edit(3, content="多云")
    session.delete(3)
    session.truncate(1)
    assert [(r.how, r.index) for r in session.edits] == [
        ("edit", 3),
        ("delete", 3),
        ("truncate", 1),
    ]
    assert session.edits[0].changed == ("content",)
    assert session.edits[1].before == {"role": "assistant", "content": "多云"}


async def test_a_call_edited_while_paused_runs_with_the_new_arguments():
    """Between decide and execute_tools, edit_call changes what the run executes."""
    agent = an.travel.travel_agent()
    session = an.Session()
    run = agent.start(REQUEST, session=session)
    while run.next_stage != "execute_tools":
        await run.step()
    call_id = session.messages[-1].tool_calls[0].id
    session.edit_call(
        call_id, arguments={"departure": "上海", "destination": "广州", "date": "周五"}
    )
    await run.step()
    result = json.loads(session.messages[-1].text)
    assert result["destination"] == "广州"
    await run.finish()
    assert session.is_valid


def test_changed_paths_descends_into_json_strings_and_lists():
    a = {"content": json.dumps({"flights": [{"no": "MU1", "price": 880}], "ok": True})}
    b = {"content": json.dumps({"flights": [{"no": "MU1", "price": 650}, {"no": "X"}]})}
    assert changed_paths(a, b) == ["content.flights[0].price", "content.flights[1]", "content.ok"]
    assert changed_paths("a", "b") == ["(value)"] and changed_paths([1], [1]) == []
