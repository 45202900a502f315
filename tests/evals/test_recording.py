"""Tool recordings and replaying variants: nothing runs, misses are not_recorded; forks."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb import checks

EXECUTED: list[tuple[str, dict]] = []


@an.tool
def search_weather(city: str, date: str, unit: str = "C") -> dict:
    """Weather."""
    EXECUTED.append(("search_weather", {"city": city, "date": date}))
    return {"city": city, "date": date, "condition": "晴", "temp_max_c": 5}


@an.tool
async def book_hotel(city: str, nights: int = 1) -> dict:
    """Books a room: a side effect."""
    EXECUTED.append(("book_hotel", {"city": city, "nights": nights}))
    return {"booked": True, "city": city, "nights": nights}


def call(id, name, **args):
    return {
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    }


def script(*cities: str):
    """Weather for each city, one reply each, then a booking in the last city, then an answer."""
    replies = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(f"w{i}", "search_weather", city=c, date="周五")],
        }
        for i, c in enumerate(cities)
    ]
    replies.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("b0", "book_hotel", city=cities[-1])],
        }
    )
    replies.append("done")
    return an.models.ScriptedModel(replies)


@pytest.fixture(autouse=True)
def _clear():
    EXECUTED.clear()


async def recorded_session() -> an.Session:
    agent = an.Agent("x", [search_weather, book_hotel], script("北京", "上海"))
    session = an.Session()
    await agent.run("北京和上海周五天气，订上海的酒店", session=session)
    assert len(EXECUTED) == 3
    EXECUTED.clear()
    return session


async def test_a_replaying_agent_never_executes_a_tool():
    recording = an.ToolRecording.from_sessions([await recorded_session()])
    assert len(recording) == 3 and "book_hotel" in repr(recording)
    agent = an.Agent("x", [search_weather, book_hotel], script("北京", "上海")).replaying(recording)
    result = await agent.run("again")
    assert EXECUTED == []  # the counter proves it: nothing ran, the booking included
    tool_messages = [m for m in result.messages if m.role == "tool"]
    assert [json.loads(m.content)["city"] for m in tool_messages] == ["北京", "上海", "上海"]
    assert all(m.kind is None for m in tool_messages) and recording.hits == 3
    # the arguments were compared as validated: unit="C" is filled in, and still matches
    assert recording.misses == []


async def test_a_call_off_the_recorded_trajectory_is_a_mismatch_naming_turn_and_step():
    recording = an.ToolRecording.from_sessions([await recorded_session()])
    agent = an.Agent("x", [search_weather, book_hotel], script("北京", "广州"))
    ev = await an.evaluate(
        {"replayed": agent.replaying(recording)},
        [an.Task("t", "q", checks=[checks.no_tool_errors()])],
    )
    record = ev.records[0]
    assert EXECUTED == []  # neither the diverging weather call nor the booking ran
    assert record.outcome == "fail" and record.tool_errors == 2
    assert record.divergence.startswith("turn 0, step 1, call 0: search_weather(")
    assert "广州" in record.divergence and "mismatch" in record.divergence
    misses = [m for m in ev.session("replayed", "t").messages if m.role == "tool" and not m.ok]
    assert [m.kind for m in misses] == ["mismatch", "mismatch"]
    assert "turn 0, step 1, call 0" in misses[0].error["error"]
    assert "上海" in misses[0].error["error"]  # what the recording holds there
    assert recording.misses[0] == {
        "tool": "search_weather",
        "arguments": '{"city":"广州","date":"周五","unit":"C"}',
        "kind": "mismatch",
        "run": ("", "session-0", 0),
        "turn": 0,
        "step": 1,
        "index": 0,
        "served": "error",
    }
    assert {"not_recorded", "mismatch", "exhausted"} <= set(an.ERROR_KINDS)


async def test_a_replay_that_goes_further_than_its_recording_is_exhausted():
    recording = an.ToolRecording.from_sessions([await recorded_session()])
    agent = an.Agent("x", [search_weather, book_hotel], script("北京", "上海", "广州"))
    result = await agent.replaying(recording).run("q")
    kinds = [m.kind for m in result.messages if m.role == "tool"]
    assert kinds == [None, None, "mismatch", "exhausted"]  # step 2 was the booking; 3 is past it
    assert EXECUTED == []


async def test_missing_live_runs_only_the_unrecorded_calls():
    recording = an.ToolRecording.from_sessions([await recorded_session()])
    agent = an.Agent("x", [search_weather, book_hotel], script("北京", "广州"))
    result = await agent.replaying(recording, missing="live").run("q")
    assert EXECUTED == [
        ("search_weather", {"city": "广州", "date": "周五"}),
        ("book_hotel", {"city": "广州", "nights": 1}),
    ]
    assert all(m.ok for m in result.messages if m.role == "tool")


async def test_a_recording_from_an_evaluation_and_a_file(tmp_path):
    agent = an.Agent("x", [search_weather, book_hotel], script("北京"))
    ev = await an.evaluate({"live": agent}, [an.Task("t", "q")])
    recording = an.ToolRecording.from_evaluation(ev)
    back = an.ToolRecording.load(recording.save(tmp_path / "tools.jsonl"))
    assert back.entries == recording.entries and len(back) == 2
    with pytest.raises(an.ConfigurationError, match="missing must be"):
        agent.replaying(back, missing="sometimes")


async def test_identical_calls_get_the_recorded_results_in_turn():
    recording = an.ToolRecording(
        [
            ("search_weather", {"city": "北京", "date": "周五"}, "first"),
            ("search_weather", {"date": "周五", "city": "北京"}, "second"),
        ]
    )
    replies = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(f"w{i}", "search_weather", city="北京", date="周五")],
        }
        for i in range(3)
    ] + ["done"]
    agent = an.Agent("x", [search_weather], an.models.ScriptedModel(replies), repeat_limit=0)
    result = await agent.replaying(recording, match="arguments").run("q")
    assert [m.content for m in result.messages if m.role == "tool"] == ["first", "second", "second"]
    # without positions, the trajectory cannot answer: said, never guessed
    again = an.Agent("x", [search_weather], an.models.ScriptedModel([*replies[:1], "done"]))
    result = await again.replaying(recording).run("q")
    error = result.messages[2].error
    assert error["kind"] == "not_recorded" and "match='arguments'" in error["error"]


async def test_fork_at_a_model_call_edit_a_tool_result_and_continue():
    session = await recorded_session()
    assert [m.role for m in session.messages].count("assistant") == 4
    fork = session.fork(call=1)  # what model call 1 was asked: up to the first tool result
    assert fork.forked_from == session.id and fork.messages[-1].role == "tool"
    assert len(fork) == 3 and session.fork(at=3).to_openai() == fork.to_openai()
    fork.edit(2, content=json.dumps({"city": "北京", "condition": "暴雪"}, ensure_ascii=False))

    def answer(request):
        weather = json.loads(request.messages[-1]["content"])
        return f"北京{weather['condition']}"

    agent = an.Agent("x", [search_weather, book_hotel], an.models.FunctionModel(answer))
    result = await agent.run(None, session=fork)
    assert result.output == "北京暴雪" and EXECUTED == []
    assert session.messages[2].content != fork.messages[2].content  # the original is untouched
    with pytest.raises(IndexError, match="model call 9"):
        session.fork(call=9)
    with pytest.raises(ValueError, match="not both"):
        session.fork(at=1, call=1)


async def test_a_tool_error_is_replayed_as_it_was_and_a_timeout_is_recorded_too():
    live = an.travel.travel_agent()
    ev = await an.evaluate({"live": live}, an.travel.task_set(tags=["unknown_city"]))
    recording = an.ToolRecording.from_evaluation(ev)
    desk = an.travel.TravelTools(faults={"search_flights": "upstream_error"})
    replayed = await an.evaluate(
        {"replayed": an.travel.travel_agent(tools=desk).replaying(recording)},
        an.travel.task_set(tags=["unknown_city"]),
    )
    assert recording.misses == [] and {r.outcome for r in replayed.records} == {"pass"}
    for record in ev.records:  # "no such city" came back exactly as the tool first said it
        before = [m.content for m in ev.session("live", record.task).messages if m.role == "tool"]
        after = [
            m.content
            for m in replayed.session("replayed", record.task).messages
            if m.role == "tool"
        ]
        assert before == after
    timeouts = an.Session(
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("c0", "search_weather", city="北京", date="周五")],
            },
            {
                "role": "tool",
                "tool_call_id": "c0",
                "content": '{"ok": false, "kind": "timeout", "error": "search_weather timed out"}',
            },
        ]
    )
    # a timeout is what that run saw at that position: it is recorded and replayed as a timeout
    (entry,) = an.ToolRecording.from_sessions([timeouts]).entries
    assert json.loads(entry.result)["kind"] == "timeout" and entry.position == (0, 0, 0)
