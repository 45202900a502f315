"""Whole-transcript tests of the loop (DESIGN invariants 1-3, issue #2 acceptance)."""

from __future__ import annotations

import asyncio
import json

import agentnb as an
from agentnb.models import ScriptedModel
from tests.helpers import assert_valid_conversation, call, calls, content

ASK = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"
FLIGHT = {"departure": "上海", "destination": "北京", "date": "2025-01-10"}


def travel_script(final: str = "MU5101 08:00 880元；北京晴；全季520元；合计1400元，在预算内。"):
    return [
        calls(call("c1", "search_flights", **FLIGHT)),
        calls(call("c2", "search_weather", city="北京", date="2025-01-10")),
        calls(call("c3", "search_hotels", city="北京", check_in_date="2025-01-10")),
        calls(call("c4", "calculate_cost", items=[880, 520])),
        final,
    ]


async def test_four_tool_sequence_whole_transcript(tools):
    model = ScriptedModel(travel_script())
    agent = an.Agent("你是差旅助手。", tools, model=model, max_iterations=6)
    session = an.Session()
    result = await agent.run(ASK, session=session)

    assert result.stop_reason == "final_answer"
    assert result.iterations == 5
    assert result.output.startswith("MU5101")
    model.assert_complete()
    script = travel_script()
    assert session.to_openai() == [
        {"role": "user", "content": ASK},
        script[0],
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "search_flights",
            "content": '{"flights": [{"flight_no": "MU5101", "departure_time": "08:00", "price": 880}]}',
        },
        script[1],
        {
            "role": "tool",
            "tool_call_id": "c2",
            "name": "search_weather",
            "content": '{"city": "北京", "date": "2025-01-10", "condition": "晴", "min_c": -3, "max_c": 5}',
        },
        script[2],
        {
            "role": "tool",
            "tool_call_id": "c3",
            "name": "search_hotels",
            "content": '{"hotels": [{"name": "全季", "price": 520}], "nights": 1}',
        },
        script[3],
        {
            "role": "tool",
            "tool_call_id": "c4",
            "name": "calculate_cost",
            "content": '{"total": 1400.0}',
        },
        {"role": "assistant", "content": script[4]},
    ]
    # Every request started with the instructions and carried the four tool schemas.
    assert len(model.requests) == 5
    for i, request in enumerate(model.requests):
        assert request.messages[0] == {"role": "system", "content": "你是差旅助手。"}
        assert [t["function"]["name"] for t in request.tools] == [t.name for t in tools]
        assert len(request.messages) == 2 + 2 * i  # system + user + (call, result) pairs
    assert session.snapshots == model.requests
    assert [type(e).__name__ for e in result.events].count("ModelResponded") == 5
    assert isinstance(result.events[-1], an.events.RunStopped)


async def test_two_parallel_calls_in_one_reply_keep_call_order(tools):
    order: list[str] = []

    @an.tool
    async def slow_weather(city: str) -> str:
        """Slow."""
        await asyncio.sleep(0.05)
        order.append("weather")
        return f"{city}: 晴"

    @an.tool
    async def fast_hotels(city: str) -> str:
        """Fast."""
        order.append("hotels")
        return f"{city}: 全季"

    model = ScriptedModel(
        [
            calls(call("w", "slow_weather", city="杭州"), call("h", "fast_hotels", city="杭州")),
            "杭州周六晴，全季可订。",
        ]
    )
    agent = an.Agent("", [slow_weather, fast_hotels], model=model)
    result = await agent.run("周六杭州")
    msgs = result.session.to_openai()
    assert order == ["hotels", "weather"]  # ran concurrently: the fast one finished first
    assert [m.get("tool_call_id") for m in msgs[2:4]] == ["w", "h"]  # appended in call order
    assert [m["content"] for m in msgs[2:4]] == ["杭州: 晴", "杭州: 全季"]
    assert_valid_conversation(msgs)


async def test_serial_on_request_runs_one_after_another():
    order: list[str] = []

    def make(name: str, delay: float) -> an.Tool:
        async def fn(x: int) -> int:
            order.append(f"start {name}")
            await asyncio.sleep(delay)
            order.append(f"end {name}")
            return x

        fn.__name__ = name
        fn.__doc__ = name
        return an.tool(fn)

    script = [calls(call("a", "a", x=1), call("b", "b", x=2)), "done"]
    agent = an.Agent(
        "", [make("a", 0.02), make("b", 0)], model=ScriptedModel(script), parallel_tool_calls=False
    )
    result = await agent.run("go")
    assert order == ["start a", "end a", "start b", "end b"]
    assert result.session.snapshots[0].params == {"parallel_tool_calls": False}

    order.clear()
    seq_b = make("b", 0)
    seq_b.sequential = True
    agent = an.Agent("", [make("a", 0.02), seq_b], model=ScriptedModel(script))
    await agent.run("go")
    assert order == ["start a", "end a", "start b", "end b"]


class Boom(Exception):
    pass


async def test_every_failure_reaches_the_model_and_the_run_goes_on(tools):
    @an.tool
    def explode(city: str) -> str:
        """Raises."""
        raise Boom("upstream exploded")

    @an.tool
    def refuse(city: str) -> str:
        """Expected failure."""
        raise an.ToolError(
            f"unknown city {city!r}", hint="known cities: 北京, 上海", retryable=False
        )

    @an.tool(timeout=0.05)
    async def hang(city: str) -> str:
        """Never answers in time."""
        await asyncio.sleep(10)
        return "late"

    @an.tool(timeout=0.05)
    def hang_sync(city: str) -> str:
        """A blocking call that is too slow (runs in a worker thread)."""
        import time

        time.sleep(0.3)
        return "late"

    model = ScriptedModel(
        [
            calls(
                {
                    "id": "j",
                    "type": "function",
                    "function": {
                        "name": "search_weather",
                        "arguments": '{"city": "北京", "date": ',
                    },
                },
                call("u", "book_flight", flight="MU5101"),
                call("v", "search_flights", from_city="上海", to_city="北京", date="2025-01-10"),
                call("t", "search_weather", city="北京", date=20250110),
                call("e", "explode", city="北京"),
                call("r", "refuse", city="火星"),
                call("h", "hang", city="北京"),
                call("s", "hang_sync", city="北京"),
                {
                    "id": "l",
                    "type": "function",
                    "function": {"name": "search_weather", "arguments": "[1, 2]"},
                },
            ),
            "抱歉，部分信息暂时无法获取。",
        ]
    )
    agent = an.Agent("", [*tools, explode, refuse, hang, hang_sync], model=model)
    result = await agent.run("test")
    assert result.stop_reason == "final_answer"
    msgs = result.session.to_openai()
    assert_valid_conversation(msgs)
    results = {m["tool_call_id"]: content(m) for m in msgs if m["role"] == "tool"}
    assert all(r["ok"] is False for r in results.values())

    assert "not valid JSON" in results["j"]["error"]
    assert "city (string, required)" in results["j"]["hint"]
    assert results["u"]["error"] == "unknown tool 'book_flight'"
    assert "search_flights, search_weather, search_hotels, calculate_cost" in results["u"]["hint"]
    problems = {p["field"]: p["problem"] for p in results["v"]["problems"]}
    assert problems == {
        "departure": "required argument is missing",
        "destination": "required argument is missing",
        "from_city": "unexpected argument (not in the schema)",
        "to_city": "unexpected argument (not in the schema)",
    }
    assert results["t"]["problems"][0]["field"] == "date"
    assert "20250110" in results["t"]["problems"][0]["problem"]
    assert results["e"]["error"] == "Boom: upstream exploded"
    assert results["r"] == {
        "ok": False,
        "error": "unknown city '火星'",
        "kind": "tool_error",
        "hint": "known cities: 北京, 上海",
        "retryable": False,
    }
    assert results["h"]["error"] == "hang timed out after 0.05 s"
    assert results["s"]["error"] == "hang_sync timed out after 0.05 s"
    assert "must be a JSON object" in results["l"]["error"]

    kinds = {e.call_id: e.kind for e in result.trace.of_type(an.events.ToolFinished)}
    assert kinds == {
        "j": "invalid_json",
        "u": "unknown_tool",
        "v": "invalid_arguments",
        "t": "invalid_arguments",
        "e": "tool_error",
        "r": "tool_error",
        "h": "timeout",
        "s": "timeout",
        "l": "invalid_json",
    }
    # The model saw every failure in its next request.
    assert len(model.requests[1].messages) == 1 + 1 + 9  # no instructions: no system message


async def test_tool_results_are_serialised_readably():
    import dataclasses
    import datetime

    import pandas as pd
    from pydantic import BaseModel

    class Flight(BaseModel):
        no: str
        day: datetime.date

    @dataclasses.dataclass
    class Cost:
        total: float

    @an.tool
    def mixed() -> dict:
        """Mixed."""
        return {
            "flight": Flight(no="MU5101", day=datetime.date(2025, 1, 10)),
            "cost": Cost(1.5),
            "table": pd.DataFrame({"a": [1, None]}),
            "tags": ("晴",),
        }

    result = await an.Agent(
        "", [mixed], model=ScriptedModel([calls(call("m", "mixed")), "ok"])
    ).run("x")
    tool_msg = result.session.to_openai()[2]
    assert json.loads(tool_msg["content"]) == {
        "flight": {"no": "MU5101", "day": "2025-01-10"},
        "cost": {"total": 1.5},
        "table": [{"a": 1.0}, {"a": None}],
        "tags": ["晴"],
    }
    assert "晴" in tool_msg["content"]  # no \\u escapes


async def test_duplicate_and_missing_ids_are_renamed_so_every_call_pairs(tools):
    model = ScriptedModel(
        [
            calls(
                call("dup", "search_weather", city="北京", date="2025-01-10"),
                call("dup", "search_weather", city="上海", date="2025-01-10"),
                call("", "calculate_cost", items=[1]),
            ),
            "ok",
        ]
    )
    result = await an.Agent("", tools, model=model).run("x")
    msgs = result.session.to_openai()
    assert_valid_conversation(msgs)
    ids = [c["id"] for c in msgs[1]["tool_calls"]]
    assert ids[0] == "dup" and ids[1] != "dup" and ids[2]
    decided = result.trace.of_type(an.events.Decided)[0]
    assert len(decided.problems) == 2 and "duplicate id 'dup'" in decided.problems[0]


async def test_empty_reply_gets_a_visible_correction():
    model = ScriptedModel([{"role": "assistant", "content": ""}, "我是差旅助手。"])
    result = await an.Agent("", [], model=model).run("你是什么？")
    assert result.stop_reason == "final_answer"
    msgs = result.session.to_openai()
    assert msgs[2]["role"] == "user" and msgs[2]["name"] == "agentnb"
    assert "empty" in msgs[2]["content"]
    assert model.requests[1].messages[-1] == msgs[2]
