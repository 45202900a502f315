"""Prompt tuning works offline (issue #16): the three changes a new user tried each change the
answers of the requests they concern, as the user expects, and leave the others alone; and
each knob changes a run the way its rule says."""

from __future__ import annotations

import json
import re

import pytest

import agentnb as an
from agentnb.travel import ARTICLE_REQUESTS, INSTRUCTIONS, TravelModel, TravelTools, travel_agent

CHEAP_FIRST = "Recommend the cheapest option first when the user says 便宜/cheap or gives a budget."
ASK_AT_ONCE = "Ask for city, dates and nights together when they are missing."
HOTELS_CHEAP = "查询城市可预订的酒店及价格，推荐最便宜的。"
#: Five requests of a user's own, as in the issue.
REQUESTS = {
    "article": ARTICLE_REQUESTS["000"],  # a budget, no nights
    "cheap_hotel": "周五北京有什么便宜的酒店，住两晚",
    "plain_hotel": "周五北京的酒店，住两晚",
    "no_date_hotel": "帮我订个北京的酒店",
    "flights_only": "周五上海飞北京",
}


async def outputs(agent_factory) -> dict[str, an.RunResult]:
    return {k: await agent_factory().run(text) for k, text in REQUESTS.items()}


def hotel_of(result: an.RunResult) -> str | None:
    m = re.search(r"酒店：(\S+?)（", result.output)
    return m.group(1) if m else None


def calls(result: an.RunResult) -> list[tuple[str, dict]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls]


@pytest.fixture
async def base():
    return await outputs(travel_agent)


async def test_cheapest_first_when_the_user_says_cheap_or_gives_a_budget(base):
    tuned = await outputs(lambda: travel_agent(instructions=INSTRUCTIONS + "\n" + CHEAP_FIRST))
    changed = {k for k in REQUESTS if tuned[k].output != base[k].output}
    assert changed == {"article", "cheap_hotel"}  # a budget, or 便宜: the others stay as they were
    for k in changed:
        assert hotel_of(base[k]).startswith("全季") and hotel_of(tuned[k]).startswith("如家")
    assert "280 元/晚 × 1 晚" in tuned["article"].output
    assert "预算：880 + 280 = 合计 1160 元" in tuned["article"].output
    reasoning = tuned["article"].session.messages[-1].reasoning_content
    assert (
        "[hotel_choice] 用户给了预算 → 选 280 元的如家酒店，而不是评分更高的全季酒店" in reasoning
    )


async def test_ask_for_everything_at_once(base):
    tuned = await outputs(lambda: travel_agent(instructions=INSTRUCTIONS + "\n" + ASK_AT_ONCE))
    changed = {k for k in REQUESTS if tuned[k].output != base[k].output}
    assert changed == {"article", "no_date_hotel"}  # nights unstated; day and nights unstated
    assert tuned["no_date_hotel"].output == "开始查询前请一并告诉我：哪天入住、住几晚？"
    assert base["no_date_hotel"].output.startswith("请问哪天入住？")  # one question at a time
    assert tuned["article"].tool_calls == [] and "住几晚" in tuned["article"].output
    # the user answers both at once, and the trip goes on from there
    session = an.Session()
    agent = travel_agent(instructions=INSTRUCTIONS + "\n" + ASK_AT_ONCE)
    await agent.run(REQUESTS["no_date_hotel"], session=session)
    follow = await agent.run("周五，住两晚", session=session)
    assert calls(follow) == [("search_hotels", {"city": "北京", "check_in_date": "周五",
                                                "nights": 2})]  # fmt: skip


async def test_a_rewritten_search_hotels_description_changes_the_hotel_only(base):
    def agent() -> an.Agent:
        tools = TravelTools()
        a = travel_agent(tools=tools)
        a.tools.remove("search_hotels")
        a.tools.add(an.Tool(tools.search_hotels, description=HOTELS_CHEAP))
        return a

    tuned = await outputs(agent)
    changed = {k for k in REQUESTS if tuned[k].output != base[k].output}
    assert changed == {"article", "cheap_hotel", "plain_hotel"}  # every hotel answer, no other
    for k in changed:
        assert hotel_of(tuned[k]).startswith("如家"), tuned[k].output
    table = an.travel.TravelModel().understood(agent())
    assert table["hotel_choice"] == "cheapest" and table["flight_choice"] == "earliest"
    assert table.frame.loc["hotel_choice", "where"] == "tool search_hotels"


# -- each knob changes a run as its rule says ---------------------------------------------------
async def run(extra: str, text: str = ARTICLE_REQUESTS["000"]) -> an.RunResult:
    return await travel_agent(instructions=INSTRUCTIONS + "\n" + extra).run(text)


async def test_form_length_and_leave_out_shape_the_answer(base):
    table = await run("用表格给出结果。")
    assert table.output.startswith("| 项目 | 内容 |") and "| 航班 | 推荐 MU5101" in table.output
    bullets = await run("Answer as a bulleted list.")
    assert all(line.startswith("- ") for line in bullets.output.splitlines())
    prose = await run("用一段话回答。")
    assert "\n" not in prose.output and "MU5101" in prose.output
    brief = await run("回答要简短。")
    assert (
        brief.output
        == "推荐航班 MU5101；北京当天晴；住全季酒店(北京国贸店)；合计 1400 元，在预算内。"
    )
    no_weather = await run("回答不要列出天气。")
    assert "天气" not in no_weather.output and "°C" not in no_weather.output
    assert "search_weather" in [c.function.name for c in no_weather.tool_calls]  # looked up
    english = await run("请用英文回答。")
    assert english.output.startswith("Flight: MU5101")


async def test_choices_budget_and_booking():
    latest = await run("推荐最晚的航班。")
    assert "推荐 FM4934" in latest.output and "17:00" in latest.output
    rated = await run("推荐评分最高的酒店。")
    assert "酒店：北京饭店" in rated.output
    tight = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算1000以内。"
    stop = await run("超出预算就停止。", tight)
    assert (
        stop.output.splitlines()[-1].startswith("预算不够，我先停在这里")
        and "航班" not in stop.output
    )
    report = await run("", tight)  # the default instructions: an alternative
    assert "备选方案" in report.output
    just = await travel_agent(instructions=INSTRUCTIONS.replace("，并给出备选方案", "")).run(tight)
    assert "备选方案" not in just.output and "超出 1000 元预算" in just.output
    book = await run("预订前先和用户确认。")
    assert book.output.endswith("需要我为你预订吗？预订前我会先和你确认。")
    flights = await run("预订前先和用户确认。", "周五上海飞北京")  # nothing to book asked
    assert "预订" not in flights.output


async def test_dates_missing_calls_and_failures():
    iso = await run("日期一律用 YYYY-MM-DD。")
    assert {args.get("date", args.get("check_in_date")) for _, args in calls(iso)[:3]} == {
        "2025-01-10"}  # fmt: skip
    relative = await travel_agent(schemas="article",
                                  instructions=INSTRUCTIONS + "\n保留用户的相对日期。").run("周五上海飞北京")  # fmt: skip
    assert calls(relative)[0][1]["date"] == "周五"  # against the article's ISO schema
    ask = await run("日期不明确时先询问用户具体日期。", "周五上海飞北京")
    assert ask.tool_calls == [] and "「周五」具体是几月几号" in ask.output
    assume = await run("缺少日期时默认明天。", "帮我订个北京的酒店")
    assert calls(assume)[0][1]["check_in_date"] == "明天" and assume.output.startswith(
        "（未说明日期"
    )
    parallel = await run("同时调用所有需要的工具。")
    assert parallel.iterations == 3  # three searches in one reply, then the cost, then the answer
    serial = await travel_agent(instructions=INSTRUCTIONS + "\n一次只调用一个工具。",
                                parallel_tool_calls=True).run(ARTICLE_REQUESTS["000"])  # fmt: skip
    assert serial.iterations == 5
    tools = TravelTools(faults={"search_weather": "rate_limit"})
    retried = await travel_agent(tools=tools).run(ARTICLE_REQUESTS["000"])
    tools = TravelTools(faults={"search_weather": "rate_limit"})
    reported = await travel_agent(tools=tools,
                                  instructions=INSTRUCTIONS + "\n工具失败不要重试。").run(ARTICLE_REQUESTS["000"])  # fmt: skip
    count = lambda r: [c.function.name for c in r.tool_calls].count("search_weather")  # noqa: E731
    assert (count(retried), count(reported)) == (2, 1)
    assert "天气：暂时无法获取" in reported.output


async def test_an_assumed_day_applies_to_every_lookup_that_needs_a_day_or_is_not_read():
    """Told 没说日期就按明天算, the stand-in assumed tomorrow for flights and hotels, but a
    weather-only request checked today's weather while understood() reported the line as
    read (issue 36). Every request that needs a day gets the assumed one."""
    line = "没说日期就按明天算。"
    assert TravelModel().understood(INSTRUCTIONS + "\n" + line)["missing"] == "assume"
    for request in ("北京天气怎么样？", "帮我订个北京的酒店", "上海飞北京的航班"):
        result = await run(line, request)
        dates = {args.get("date", args.get("check_in_date")) for _, args in calls(result)}
        assert dates == {"明天"}, (request, calls(result))
        assert result.output.startswith("（未说明日期，按明天计。）"), result.output
