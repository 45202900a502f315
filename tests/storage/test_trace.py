from __future__ import annotations

import agentnb as an
from agentnb.models import ScriptedModel
from agentnb.storage.codec import event_from_dict, event_to_dict
from tests.helpers import call, calls


async def make_result(tools):
    model = ScriptedModel(
        [calls(call("c1", "search_weather", city="北京", date="2025-01-10")), "晴"]
    )
    return await an.Agent("sys", tools, model=model).run("北京天气")


async def test_dataframe_one_row_per_event(tools):
    result = await make_result(tools)
    df = result.trace.to_dataframe()
    assert len(df) == len(result.events)
    assert list(df["seq"]) == list(range(1, len(df) + 1))
    assert set(df["stage"]) == set(an.STAGES)
    assert (df["run_id"] == result.run_id).all() and (df["trace_id"] == result.trace_id).all()
    finished = df[df["type"] == "ToolFinished"].iloc[0]
    assert finished["name"] == "search_weather" and bool(finished["ok"]) is True
    assert finished["latency"] >= 0
    assert df["t"].is_monotonic_increasing


async def test_jsonl_round_trip(tools, tmp_path):
    result = await make_result(tools)
    path = result.trace.save(tmp_path / "run.jsonl")
    loaded = an.Trace.load(path)
    assert [event_to_dict(e) for e in loaded] == [event_to_dict(e) for e in result.events]
    assert loaded[3].request == result.events[3].request
    assert loaded.to_dataframe().equals(result.trace.to_dataframe())
    assert "search_weather" in result.trace._repr_mimebundle_()["text/plain"]


async def test_request_snapshots_diff(tools):
    result = await make_result(tools)
    first, second = result.session.snapshots
    diff = first.diff(second)
    assert diff.common == 2 and len(diff.added) == 2 and not diff.removed
    assert [m["role"] for _, m in diff.added] == ["assistant", "tool"]
    assert not diff.tools_changed and not diff.instructions_changed
    body = second.to_openai()
    assert body["messages"][0] == {"role": "system", "content": "sys"} and len(body["tools"]) == 4


async def test_every_event_field_round_trips_by_its_declared_type(tools):
    """One codec: a field is rebuilt from its annotation (a message, a request, a usage, a
    tuple), not from its name, so a new event type round-trips without a new decoder."""
    agent = an.travel.travel_agent()
    result = await agent.run("周五上海到北京的航班", session=an.Session())
    for event in result.events:
        back = event_from_dict(event_to_dict(event))
        assert type(back) is type(event) and event_to_dict(back) == event_to_dict(event)
        for name, value in event.fields().items():
            assert type(getattr(back, name)) is type(value), (event.type, name)
