"""The stand-in answers tool results of any shape (issue 30): what it can read it uses, what it
cannot it says so (quoting the plain values it sees), and it never raises — exposed through
``an.observe.serve`` to any app, it must not answer HTTP 500 on a foreign result."""

from __future__ import annotations

import json

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.models.request import ModelRequest
from agentnb.testing import ungrounded_figures
from agentnb.travel import TravelModel, travel_agent

TOOLS = travel_agent().tools.schemas()
ASK = {
    "zh": "我周五从上海去北京出差，帮我看看航班和天气，再订个酒店，预算3000以内。",
    "en": "Flights from Shanghai to Beijing on Friday, the weather and a hotel; budget 3000.",
}
RULES = "不要重复查询。输出规范：最终回答必须列出航班、天气、酒店和预算。"
UNREAD = ("格式不是我认识的", "不是结构化数据", "shape I do not know", "not as structured data",
          "不知道它是做什么的", "do not know what it is for")  # fmt: skip
ARGS = {"search_flights": {"departure": "上海", "destination": "北京", "date": "周五"},
        "search_weather": {"city": "北京", "date": "周五"},
        "search_hotels": {"city": "北京", "check_in_date": "周五"},
        "calculate_cost": {"items": [{"label": "x", "unit_price": 1, "quantity": 1}]}}  # fmt: skip

#: (the tool that answered, what it answered): none of them shaped like the travel tools'.
SHAPES: list[tuple[str, object]] = [
    ("search_flights", {"results": [{"flight": "CA1", "price": 100}]}),
    ("search_flights", {"flights": [{"id": 1}]}),
    ("search_flights", {"flights": "none today"}),
    ("search_flights", {"data": {"itineraries": [{"legs": [{"from": "PVG", "to": "PEK"}]}]}}),
    ("search_flights", []),
    ("search_flights", "no flights, sorry"),
    ("search_flights", {"departure": "上海", "destination": "北京", "flights": [
        {"flight_no": 5101, "airline": "东航", "departure_airport": "虹桥", "arrival_airport": "首都",
         "departure_time": "08:00", "arrival_time": "10:15", "price": "880", "seats_left": 3}]}),
    ("search_weather", {"temp": 20, "sky": "sunny"}),
    ("search_weather", {"city": "北京", "condition": "晴"}),
    ("search_weather", {"forecast": [{"day": "2025-01-10", "high": 15, "low": -3}]}),
    ("search_weather", {"city": "北京", "condition": None}),
    ("search_hotels", {"hotels": [{"name": "X"}]}),
    ("search_hotels", {"results": {"count": 0}}),
    ("search_hotels", {"city": "北京", "hotels": {"a": 1}}),
    ("calculate_cost", {"sum": 1400}),
    ("calculate_cost", {"items": [], "total": "1400"}),
    ("calculate_cost", {"items": [{"label": "x", "subtotal": 10}], "total": 10, "budget": 3000}),
    ("search_flights", {"ok": False}),
    ("search_flights", {"ok": False, "error": {"code": 500, "message": "boom"}}),
    ("search_weather", {"error": "boom"}),
    ("search_weather", None),
    ("search_weather", 42),
    ("search_hotels", ""),
    ("search_hotels", {"价格": 880, "航班": "MU5101"}),
    ("lookup_poi", {"poi": "故宫", "open": "08:30"}),
]  # fmt: skip


def request(tool: str, result: object, language: str, rules: bool,
            call_args: object = None) -> list[dict]:  # fmt: skip
    args = call_args if call_args is not None else json.dumps(ARGS.get(tool, {}))
    content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return [
        {"role": "system", "content": RULES if rules else "不要重复查询。"},
        {"role": "user", "content": ASK[language]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": tool, "arguments": args}}]},
        {"role": "tool", "tool_call_id": "c0", "content": content},
    ]  # fmt: skip


def answer(messages: list[dict], tools: list[dict] | None = None) -> an.AssistantMessage:
    return TravelModel().reply(ModelRequest(messages, TOOLS if tools is None else tools))


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("rules", [True, False], ids=["output_rules", "summary"])
@pytest.mark.parametrize(("tool", "result"), SHAPES, ids=[f"{t}-{i}" for i, (t, _) in
                                                          enumerate(SHAPES)])  # fmt: skip
def test_a_foreign_result_is_read_as_far_as_it_goes_and_said(tool, result, language, rules):
    messages = request(tool, result, language, rules)
    reply = answer(messages)
    assert reply.content or reply.tool_calls
    if reply.tool_calls:  # it goes on with the lookups it still needs
        assert {c.function.name for c in reply.tool_calls} <= {t["function"]["name"] for t in TOOLS}
        return
    assert ungrounded_figures([*messages, reply.wire()]) == [], reply.content


@pytest.mark.parametrize(
    ("tool", "result"),
    SHAPES[:17] + SHAPES[20:],
    ids=[f"{t}-{i}" for i, (t, _) in enumerate(SHAPES[:17] + SHAPES[20:])],
)
def test_the_answer_says_what_it_could_not_read(tool, result):
    """The wrap-up call (no tools left): everything it has is in; the unreadable part is said."""
    reply = answer(request(tool, result, "zh", True), tools=[])
    assert reply.content and any(u in reply.content for u in UNREAD), reply.content


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("tool", ["search_weather", "search_flights"])
@pytest.mark.parametrize("result", [{"error": "上游服务超时", "fallback": []}, {"error": "boom"}])
def test_a_tool_s_own_error_structure_is_a_failure_not_a_foreign_shape(tool, result, language):
    """Article 000 §5.2's first layer: a tool returns a fixed structure even when it fails,
    ``{"error": "上游服务超时", "fallback": []}``. The instructions say what to do when a tool
    returns an ``error`` field; the stand-in reads it as that lookup failing (item 48 of the
    article map), not as data of a shape it does not know."""
    reply = answer(request(tool, result, language, True), tools=[])
    section = {"search_weather": ("天气", "Weather"), "search_flights": ("航班", "Flights")}[tool]
    line = next(x for x in reply.content.splitlines() if x.startswith(section))
    assert ("暂时无法获取" in line) if language == "zh" else ("unavailable right now" in line), line
    assert not any(u in reply.content for u in UNREAD), reply.content


@pytest.mark.parametrize("flights", [[None], None])
def test_a_result_read_as_another_role_s_data_lends_none_of_its_fields(flights):
    """Found by the hypothesis test below: without the tool schemas (the wrap-up call), a flight
    result ``{"city": "", "hotels": [], "flights": …}`` fits the hotels shape; its ``flights``
    field was then read as flights and raised."""
    result = {"hotels": [], "flights": flights, "city": ""}
    reply = answer(request("search_flights", result, "zh", False), tools=[])
    assert reply.content


def test_arguments_as_an_object_and_an_unknown_call_id_are_read_too():
    messages = request("search_weather", {"temp": 20}, "zh", True, call_args={"city": "北京"})
    assert answer(messages).content or answer(messages).tool_calls
    messages[-1]["tool_call_id"] = "nobody"
    assert answer(messages, tools=[]).content
    messages[-1]["content"] = [{"type": "text", "text": json.dumps({"temp": 20})}]
    assert answer(messages, tools=[]).content


@pytest.mark.parametrize("tools", [
    [{"type": "web_search"}], [{"type": "function", "function": {"name": "search_flights",
                                                                "parameters": True}}],
    [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": True, "date": "x"}, "required": "city"}}}],
    [{"type": "function", "function": {"description": "no name"}}], ["not a tool"],
])  # fmt: skip
def test_tool_schemas_of_any_shape_are_read_without_raising(tools):
    reply = answer([{"role": "user", "content": ASK["zh"]}], tools=tools)
    assert reply.content or reply.tool_calls


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=8), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["flights", "city", "hotels", "items",
                                                       "total", "price", "ok", "error", "x"]),
                                      inner, max_size=5), max_leaves=12)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=st.sampled_from([*ARGS, "other"]), result=JSON, rules=st.booleans())
def test_no_tool_result_makes_it_raise(tool, result, rules):
    messages = request(tool, result, "zh", rules)
    for tools in (TOOLS, []):
        reply = answer(messages, tools)
        assert reply.content or reply.tool_calls


def test_served_to_an_app_a_foreign_result_gets_an_answer_not_a_500():
    messages = request("get_weather", {"temperature": {"value": 20, "unit": "C"}}, "en", True)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    with an.observe.serve(TravelModel()) as upstream, openai.OpenAI(
        base_url=upstream.base_url, api_key="x") as app:  # fmt: skip
        reply = app.chat.completions.create(model="travel", messages=messages, tools=tools)
    text = reply.choices[0].message.content or ""
    assert "shape I do not know" in text and "temperature.value=20" in text
