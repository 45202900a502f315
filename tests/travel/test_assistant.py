"""The article requests end to end on the embedded model (issue #3 acceptance)."""

from __future__ import annotations

import json
import re

import agentnb as an
from agentnb.travel import ARTICLE_REQUESTS, TravelModel, travel_agent, ungrounded_claims
from tests.helpers import assert_valid_conversation


def tool_sequence(result: an.RunResult) -> list[list[tuple[str, dict]]]:
    """Each assistant reply's tool calls as (name, arguments)."""
    return [
        [(c.function.name, json.loads(c.function.arguments)) for c in m.tool_calls]
        for m in result.messages
        if getattr(m, "tool_calls", None)
    ]


async def test_article_000_flights_weather_hotel_cost_with_a_budget_verdict():
    result = await travel_agent().run(ARTICLE_REQUESTS["000"])
    assert result.stop_reason == "final_answer"
    assert result.iterations == 5  # article 000 §4.2: 5 model calls, 4 tool calls
    assert tool_sequence(result) == [
        [("search_flights", {"departure": "上海", "destination": "北京", "date": "周五"})],
        [("search_weather", {"city": "北京", "date": "周五"})],
        [("search_hotels", {"city": "北京", "check_in_date": "周五"})],
        [
            (
                "calculate_cost",
                {
                    "items": [
                        {"label": "机票 MU5101", "unit_price": 880, "quantity": 1},
                        {"label": "酒店 全季酒店(北京国贸店)", "unit_price": 520, "quantity": 1},
                    ],
                    "budget": 3000.0,
                },
            )
        ],
    ]
    answer = result.output
    for fact in [
        "MU5101",
        "08:00",
        "10:15",
        "880 元",
        "晴",
        "-3～5°C",
        "全季酒店(北京国贸店)",
        "520 元/晚",
        "合计 1400 元",
        "在 3000 元预算内",
    ]:
        assert fact in answer, fact
    assert ungrounded_claims(result.session) == []
    assert_valid_conversation(result.session.to_openai())
    # The tools, not the model, turned 周五 into a date.
    cost = json.loads(result.messages[-2].content)
    assert cost == {
        "items": [
            {"label": "机票 MU5101", "unit_price": 880.0, "quantity": 1, "subtotal": 880.0},
            {
                "label": "酒店 全季酒店(北京国贸店)",
                "unit_price": 520.0,
                "quantity": 1,
                "subtotal": 520.0,
            },
        ],
        "total": 1400.0,
        "currency": "CNY",
        "budget": 3000.0,
        "within_budget": True,
        "remaining": 1600.0,
    }


async def test_article_001_two_calls_in_one_reply_when_parallel_is_on():
    result = await travel_agent(parallel_tool_calls=True).run(ARTICLE_REQUESTS["001"])
    assert tool_sequence(result) == [
        [
            ("search_weather", {"city": "杭州", "date": "周末"}),
            ("search_hotels", {"city": "杭州", "check_in_date": "周末", "near": "西湖"}),
        ]
    ]
    assert result.iterations == 2 and result.stop_reason == "final_answer"
    msgs = result.session.to_openai()
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool", "assistant"]
    assert "2025-01-11（周六）晴" in result.output and "西湖边精品酒店A" in result.output
    assert "距西湖 0.5 公里" in result.output


async def test_article_001_one_call_per_reply_when_parallel_is_off():
    result = await travel_agent().run(ARTICLE_REQUESTS["001"])
    assert [len(calls) for calls in tool_sequence(result)] == [1, 1]


async def test_english_equivalent():
    result = await travel_agent(language="en").run(ARTICLE_REQUESTS["en"])
    assert (
        result.session.snapshots[0].messages[0]["content"].startswith("You are a travel assistant")
    )
    assert [c[0][0] for c in tool_sequence(result)] == [
        "search_flights",
        "search_weather",
        "search_hotels",
        "calculate_cost",
    ]
    assert tool_sequence(result)[0][0][1]["departure"] == "Shanghai"
    for fact in [
        "MU5101 (China Eastern)",
        "departs SHA 08:00",
        "880 CNY",
        "sunny",
        "JI Hotel Guomao",
        "1400 CNY, within your 3000 CNY budget",
    ]:
        assert fact in result.output, fact


async def test_a_budget_too_small_gets_an_alternative():
    result = await travel_agent().run("我周五从上海去北京出差，帮我看看航班和酒店，预算1300以内")
    costs = [c for c in tool_sequence(result) if c[0][0] == "calculate_cost"]
    assert len(costs) == 2  # the chosen plan, then the cheapest combination
    assert "超出 1300 元预算 100 元" in result.output
    assert (
        "备选方案：机票 MU5101、酒店 如家酒店(北京前门店)，合计 1160 元，在预算内" in result.output
    )
    assert ungrounded_claims(result.session) == []


async def test_a_budget_nothing_can_meet_says_so():
    result = await travel_agent().run("我周五从上海去北京出差，帮我看看航班和酒店，预算800以内")
    assert "仍超出预算" in result.output and "建议调整日期" in result.output


async def test_a_city_without_data_gets_no_invented_figures():
    result = await travel_agent().run("我周五从上海去拉萨出差，帮我看看航班和天气，预算3000以内")
    assert result.stop_reason == "final_answer"
    assert len(tool_sequence(result)) == 1  # it learns the city is unknown and stops asking
    assert "数据中没有「拉萨」的信息" in result.output and "不会编造" in result.output
    assert not re.search(r"\d+ 元|°C|[A-Z]{2}\d{3,4}", result.output)
    assert ungrounded_claims(result.session) == []


async def test_history_fills_the_origin_and_a_new_question_does_not_repeat_old_work():
    session = an.Session()
    agent = travel_agent()
    first = await agent.run("我从上海出发", session=session)
    assert first.iterations == 1 and "从上海出发" in first.output
    second = await agent.run("帮我看看周五北京航班怎么样", session=session)
    assert tool_sequence(second) == [
        [("search_flights", {"departure": "上海", "destination": "北京", "date": "周五"})]
    ]


async def test_small_talk_needs_no_tool():
    result = await travel_agent().run("你是什么？")
    assert result.iterations == 1 and "差旅助手" in result.output and "确定性" in result.output


async def test_streaming_text_and_tool_argument_deltas():
    agent = travel_agent(TravelModel(stream=True))
    events = [e async for e in agent.stream(ARTICLE_REQUESTS["000"])]
    deltas = [e for e in events if isinstance(e, an.events.ModelDelta)]
    assert {"text", "tool_args", "tool_call"} <= {d.kind for d in deltas}
    final = events[-1]
    assert "".join(d.delta for d in deltas if d.kind == "text") == final.output


async def test_usage_is_estimated_and_reported():
    result = await travel_agent().run(ARTICLE_REQUESTS["000"])
    responded = result.trace.of_type(an.events.ModelResponded)
    assert all(e.usage.estimated and e.usage.total_tokens > 0 for e in responded)
    assert result.usage.total_tokens == sum(e.usage.total_tokens for e in responded)


async def test_injected_timeout_still_ends_with_an_answer():
    desk = an.travel.TravelTools(timeout=0.02)
    desk.inject("search_weather", "timeout")
    desk.inject("search_hotels", "rate_limit")
    result = await travel_agent(tools=desk).run(ARTICLE_REQUESTS["000"])
    # Retries use up max_iterations=6; the agent then asks for a final answer without tools.
    assert result.stop_reason == "max_iterations" and result.output
    assert "天气：暂时无法获取" in result.output and "MU5101" in result.output
    assert_valid_conversation(result.session.to_openai())


async def test_the_other_requests_of_the_articles():
    # 000 §1.1: "安排一下行程" plans flights, weather and a hotel, and ends with the cost tool
    # the article names (issue 42 item 2); a trip not asked to be arranged has no total.
    plan = await travel_agent().run("周五从上海去北京出差，帮我安排一下行程")
    assert [c.function.name for c in plan.tool_calls] == [
        "search_flights",
        "search_weather",
        "search_hotels",
        "calculate_cost",
    ]
    assert "费用：880 + 520 = 合计 1400 元。" in plan.output.splitlines()
    trip = await travel_agent().run("周五从上海去北京出差")
    assert "calculate_cost" not in [c.function.name for c in trip.tool_calls]
    # 001 §2.1: two days of weather and what to wear.
    two_days = await travel_agent(parallel_tool_calls=True).run(
        "查询北京今天和明天的天气并给出穿衣建议"
    )
    assert tool_sequence(two_days) == [
        [
            ("search_weather", {"city": "北京", "date": "今天"}),
            ("search_weather", {"city": "北京", "date": "明天"}),
        ]
    ]
    assert "2025-01-06（周一）" in two_days.output and "2025-01-07（周二）" in two_days.output
    assert "穿羽绒服" in two_days.output
    # 002 §4.4: a made-up city is looked up, found missing, and nothing is invented.
    made_up = await travel_agent().run("明天示例城A会下雨吗？我出门需要带伞吗？")
    assert tool_sequence(made_up) == [[("search_weather", {"city": "示例城A", "date": "明天"})]]
    assert (
        "数据中没有「示例城A」的信息" in made_up.output and ungrounded_claims(made_up.session) == []
    )
    umbrella = await travel_agent().run("明天成都会下雨吗？我出门需要带伞吗？")
    assert "小雨" in umbrella.output and "建议带伞" in umbrella.output
    nowhere = await travel_agent().run("明天会下雨吗？")
    assert nowhere.tool_calls == [] and "哪个城市" in nowhere.output
