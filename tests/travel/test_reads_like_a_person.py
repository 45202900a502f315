"""Each example of issue 25's "Why", with its exact line, behaves as a reader expects: in the
understood table and in a run (calls, arguments, answer)."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb.travel import INSTRUCTIONS, INSTRUCTIONS_EN, TravelModel, travel_agent

TRIP = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店"


def calls(result: an.RunResult) -> list[tuple[str, dict]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls]


async def run(line: str, request: str, *, english: bool = False, **model: object) -> an.RunResult:
    base = INSTRUCTIONS_EN if english else INSTRUCTIONS
    agent = travel_agent(instructions=base + "\n" + line, model=TravelModel(**model))  # type: ignore[arg-type]
    return await agent.run(request, session=an.Session())


async def test_suggest_a_cheaper_option_is_the_alternative_knob():
    assert TravelModel().understood("suggest a cheaper option")["budget"] == "alternative"
    over = "Shanghai to Beijing this Friday: flights, weather and a hotel; my budget is 1000 CNY."
    result = await run("If it is over budget, suggest a cheaper option.", over, english=True)
    costs = [args for name, args in calls(result) if name == "calculate_cost"]
    assert len(costs) == 2 and "Alternative" in result.output


@pytest.mark.parametrize(("words", "budget"), [("总共别超过2000", 2000), ("预算两千以内", 2000),
                                               ("一千五左右", 1500), ("1500块钱内", 1500)])  # fmt: skip
async def test_chinese_budgets_are_read_priced_and_judged(words, budget):
    result = await travel_agent().run(f"{TRIP}，{words}。", session=an.Session())
    costs = [args for name, args in calls(result) if name == "calculate_cost"]
    assert costs and costs[0]["budget"] == budget
    assert f"{budget} 元预算" in result.output


async def test_regardless_of_the_users_language_answer_in_english():
    line = "无论用户用什么语言提问，都请用英文回答。"
    assert TravelModel().understood(line)["language"] == "en"
    result = await run(line, "周五北京天气怎么样？")
    assert "Weather: Beijing" in result.output and "天气" not in result.output


async def test_a_date_straight_before_a_city_is_no_part_of_it():
    result = await travel_agent().run("1月18号昆明和厦门哪边更暖和？", session=an.Session())
    cities = sorted(args["city"] for name, args in calls(result) if name == "search_weather")
    assert cities == ["厦门", "昆明"] and "号昆明" not in result.output
    assert "比较：" in result.output and "更暖和" in result.output


@pytest.mark.parametrize("request_text", ["1月20日成都重庆天气怎么样",
                                          "What's the weather like in Xiamen and Kunming on January 18?"])  # fmt: skip
async def test_two_cities_weather_looks_up_both(request_text):
    result = await travel_agent().run(request_text, session=an.Session())
    looked_up = [args["city"] for name, args in calls(result) if name == "search_weather"]
    assert len(set(looked_up)) == 2, looked_up
    assert result.output.count("Weather: ") + result.output.count("天气：") == 2, result.output


async def test_a_per_tool_exclusion_is_read_and_followed():
    line = "不要调用天气工具；用户只关心航班和酒店"
    table = TravelModel().understood(line)
    assert "weather" in table["skip"] and table.not_understood == []
    result = await run(line, TRIP)
    assert "search_weather" not in {name for name, _ in calls(result)}
    assert "天气：按指示没有查询。" in result.output


async def test_no_date_means_tomorrow_without_asking():
    line = "用户没有说日期时，一律按明天处理，不要反问"
    table = TravelModel().understood(line)
    assert table["missing"] == "assume" and table.policy.assumed_day == "明天"
    result = await run(line, "帮我看看从上海去北京的航班")
    assert calls(result)[0] == ("search_flights", {"departure": "上海", "destination": "北京",
                                                    "date": "明天"})  # fmt: skip
    assert "按明天计" in result.output


async def test_do_not_write_too_long_is_brief_and_hides_nothing():
    line = "别写太长，用户没耐心看。"
    table = TravelModel().understood(line)
    assert table.set == {"length": "brief"}
    result = await run(line, TRIP + "，预算3000以内。")
    assert "没能查到任何信息" not in result.output and "MU5101" in result.output
    assert len(result.output.splitlines()) == 1  # one summary sentence


def test_the_default_sections_say_what_they_do():
    frame = TravelModel().understood("").frame
    assert frame.loc["sections", "value"] == "summary"
    assert frame.loc["sections", "effect"].startswith("no output rules: one summary sentence")


async def test_the_current_task_line_stops_the_ghost_call():
    first, second = "帮我订周五北京的酒店", "周五从上海飞北京的航班"

    async def second_turn(instructions: str) -> list[str]:
        agent = travel_agent(model=TravelModel(misbehave="ghost_call"), instructions=instructions)
        session = an.Session()
        await agent.run(first, session=session)
        return [name for name, _ in calls(await agent.run(second, session=session))]

    assert "search_hotels" in await second_turn(INSTRUCTIONS)  # the ghost call (000 §5.4)
    assert "search_hotels" not in await second_turn(INSTRUCTIONS + "\n只处理用户最新的这条请求。")


async def test_guessing_from_too_little_context_sends_wrong_arguments():
    asked = await travel_agent().run("帮我查一下航班", session=an.Session())
    assert asked.tool_calls == []  # the default model asks
    guessed = await travel_agent(model=TravelModel(misbehave="guess_args")).run("帮我查一下航班")
    assert calls(guessed) == [("search_flights", {"departure": "上海", "destination": "北京",
                                                  "date": "今天"})]  # fmt: skip
    assert "guess_args" in (guessed.messages[1].reasoning_content or "")


async def test_an_irrelevant_error_in_a_good_result_drives_a_loop():
    noisy = {"search_weather": "noisy"}
    fine = await travel_agent(faults=noisy).run("周五北京天气", session=an.Session())
    assert fine.stop_reason == "final_answer" and len(fine.tool_calls) == 1
    looping = await travel_agent(model=TravelModel(misbehave="error_loop"), faults=noisy).run(
        "周五北京天气", session=an.Session())  # fmt: skip
    assert looping.stop_reason == "repeated_action"
    assert len({json.dumps(a) for _, a in calls(looping)}) == 1  # the same call, again and again


async def test_a_system_line_asking_for_clothing_advice_shapes_every_later_turn():
    """Article 001 §5.2: 如果用户查询天气请务必同时给出穿衣建议 stays in force for every later
    round; without it, clothing advice comes only when the user asks what to wear."""

    async def answers(instructions: str) -> list[str]:
        agent = travel_agent(instructions=instructions)
        session = an.Session()
        turns = ["北京周五天气怎么样？", "那周六呢？", "Beijing weather on Sunday?"]
        return [(await agent.run(turn, session=session)).output for turn in turns]

    line = "如果用户查询天气请务必同时给出穿衣建议。"
    assert [("穿" in a or "wear" in a) for a in await answers(INSTRUCTIONS)] == [False] * 3
    assert [("穿" in a or "wear" in a) for a in await answers(INSTRUCTIONS + "\n" + line)] == [
        True] * 3  # fmt: skip
    asked = await travel_agent().run("北京周五天气怎么样？穿什么合适？")
    assert "穿羽绒服" in asked.output
    rain = await travel_agent().run("明天成都会下雨吗？")  # an umbrella answers the rain, not dress
    assert "建议带伞" in rain.output and "穿" not in rain.output


async def test_a_budget_it_cannot_read_is_said_not_guessed():
    result = await travel_agent().run(
        "周五从上海去北京，预算不多，帮我看看航班", session=an.Session()
    )
    assert "我没读懂预算「预算不多」" in result.output
    assert all(
        args.get("budget") is None for name, args in calls(result) if name == "calculate_cost"
    )


def test_the_playground_asks_the_kernel_what_the_text_being_typed_means():
    pg = an.widgets.Playground(travel_agent(), an.travel.task_set())
    assert pg.data["understands"]
    shown = pg._on_msg({"op": "understood", "instructions": INSTRUCTIONS + "\n对用户要礼貌。",
                        "tools": {"search_hotels": "查询酒店。推荐最便宜的。"}})  # fmt: skip
    assert {"line": "对用户要礼貌。", "where": "instructions"} in shown["not_understood"]
    rows = {r["knob"]: r for r in shown["rows"]}
    assert rows["hotel_choice"]["value"] == "cheapest" and rows["hotel_choice"]["where"]
