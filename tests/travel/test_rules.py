"""TravelModel listens to its request: each rule of TravelModel.rules(), on and off (issue #8)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

import agentnb as an
from agentnb.travel import (
    ARTICLE_REQUESTS,
    INSTRUCTIONS,
    INSTRUCTIONS_EN,
    TravelModel,
    TravelTools,
    travel_agent,
)
from agentnb.travel.model.knobs import KNOBS
from agentnb.travel.model.lexicon import read_policy
from agentnb.travel.model.slips import SLIPS
from tests.helpers import assert_valid_conversation

ASK = ARTICLE_REQUESTS["000"]
LINES = INSTRUCTIONS.splitlines()


def without(word: str) -> str:
    """The default instructions minus the line holding ``word``."""
    kept = [line for line in LINES if word not in line]
    assert len(kept) == len(LINES) - 1, word
    return "\n".join(kept)


def calls(result: an.RunResult) -> list[tuple[str, dict]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls]


def names(result: an.RunResult) -> list[str]:
    return [name for name, _ in calls(result)]


async def run(text: str = ASK, *, tools: list | None = None, **kwargs) -> an.RunResult:
    if tools is not None:
        model = kwargs.pop("model", None) or TravelModel()
        instructions = kwargs.pop("instructions", INSTRUCTIONS)
        agent = an.Agent(instructions, tools, model, max_iterations=6, **kwargs)
    else:
        agent = travel_agent(**kwargs)
    result = await agent.run(text)
    assert_valid_conversation(result.session.to_openai())
    assert "deterministic stand-in, no LLM" in result.trace.of_type(an.events.RunStarted)[0].model
    return result


# -- the table ----------------------------------------------------------------------------------
def test_rules_table_names_every_rule_with_its_source():
    table = TravelModel.rules()
    frame = table.frame
    assert isinstance(frame, pd.DataFrame) and len(table) == len(frame) >= 20
    cues = {"no_tools", "tools_first", "stop_when_enough", "output_rules", "answer_language",
            "budget_alternatives", "error_advice", "today"}  # fmt: skip
    assert cues | {k.name for k in KNOBS} | set(SLIPS) <= set(table)
    assert {f"misbehave_{m}" for m in an.travel.MISBEHAVIOURS} <= set(table)
    expected = {"offered_tools_only", "parameter_names", "date_format", "nights", "unclear_date"}
    assert expected <= set(table) and "tool_hints" in table
    assert list(frame.columns) == ["kind", "looks for", "with it", "without it", "source"]
    assert frame["source"].str.match(r"00[012] §|—$").all()
    assert (frame["kind"] == "knob").sum() == len(KNOBS) and (frame["kind"] == "slip").sum() == 5
    html = table.static_html()
    assert (
        "<table" in html
        and "deterministic stand-in, no LLM" in html
        and "未说明住几晚，按 1 晚计" in html
    )
    text = repr(table)
    assert text.startswith("TravelModel rules (deterministic stand-in, no LLM)")
    assert "stop_when_enough  [instruction cue, 000 §3.1, §5.1]" in text
    assert table["no_tools"]["source"] == "000 §2.3"


def test_the_default_instructions_hold_the_cues_the_default_run_needs():
    need = {"role": "assistant", "tools": "first", "stop": "when_enough",
            "on_failure": "next_day", "budget": "alternative",
            "sections": ("flights", "weather", "hotels", "cost")}  # fmt: skip
    for text in (INSTRUCTIONS, INSTRUCTIONS_EN):
        policy = read_policy(text, [])
        assert {k: policy.values()[k] for k in policy.set_by} == need
        assert policy.not_understood == [] and policy.language == "user"


# -- tool schemas -------------------------------------------------------------------------------
async def test_a_removed_tool_is_not_called_and_the_answer_says_so():
    agent = travel_agent()
    agent.tools.remove("search_weather")
    result = await agent.run(ASK)
    assert names(result) == ["search_flights", "search_hotels", "calculate_cost"]
    assert "没有可用的天气查询工具" in result.output and "°C" not in result.output


async def test_no_tools_in_the_request_means_no_call_at_all():
    result = await run(tools=[])
    assert result.tool_calls == [] and "没有可用的航班、天气、酒店、总价查询工具" in result.output


def renamed_tools(date_doc: str = "出发日期，YYYY-MM-DD，或 周五 等相对日期") -> list[an.Tool]:
    desk = TravelTools()

    async def search_flights(from_city: str, to_city: str, date: str) -> dict:
        """查询航班。

        Args:
            from_city: 出发城市
            to_city: 到达城市
            date: DATE_DOC
        """
        return await desk.search_flights(from_city, to_city, date)

    search_flights.__doc__ = (search_flights.__doc__ or "").replace("DATE_DOC", date_doc)
    return [an.Tool(search_flights), *desk.tools[1:]]


async def test_a_renamed_parameter_is_sent_under_its_new_name():
    result = await run(tools=renamed_tools())
    first = calls(result)[0]
    assert first == ("search_flights", {"from_city": "上海", "to_city": "北京", "date": "周五"})
    assert "MU5101" in result.output and not [e for e in result.trace.of_type(
        an.events.ToolFinished) if not e.ok]  # fmt: skip
    # misbehave="wrong_args" now sends the *other* names, and is corrected.
    wrong = await run(tools=renamed_tools(), model=TravelModel("wrong_args"))
    assert set(calls(wrong)[0][1]) == {"departure", "destination", "date"}
    assert calls(wrong)[1][1]["from_city"] == "上海"


async def test_a_date_described_as_yyyy_mm_dd_is_sent_as_an_iso_date():
    iso = await run(tools=renamed_tools("出发日期，格式为 YYYY-MM-DD"))
    assert calls(iso)[0][1]["date"] == "2025-01-10"
    relative = await run(tools=renamed_tools("出发日期"))
    assert calls(relative)[0][1]["date"] == "周五"
    # The reference date comes from the instructions when they give one.
    later = await run(tools=renamed_tools("日期，格式为 YYYY-MM-DD"),
                      instructions=INSTRUCTIONS + "\n今天是 2025-01-13。")  # fmt: skip
    assert calls(later)[0][1]["date"] == "2025-01-17"


async def test_article_schemas_reproduce_the_11_step_table_and_1920():
    result = await run("我周五从上海去北京出差，住两晚，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。",
                       schemas="article")  # fmt: skip
    assert calls(result)[:3] == [
        ("search_flights", {"departure": "上海", "destination": "北京", "date": "2025-01-10"}),
        ("search_weather", {"city": "北京", "date": "2025-01-10"}),
        ("search_hotels", {"city": "北京", "date": "2025-01-10"}),
    ]
    assert calls(result)[3][1]["items"][1]["unit_price"] == 520
    assert calls(result)[3][1]["items"][1]["quantity"] == 2
    assert json.loads(result.messages[-2].content)["total"] == 1920
    assert result.iterations == 5 and len(result.session) == 10  # 11 steps: 10 messages + end
    assert "520 元/晚 × 2 晚 = 1040 元" in result.output and "合计 1920 元" in result.output


async def test_two_nights_with_the_default_schemas_are_priced_night_by_night():
    result = await run("我周五从上海去北京出差，住两晚，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。")  # fmt: skip
    assert calls(result)[2] == ("search_hotels",
                                {"city": "北京", "check_in_date": "周五", "nights": 2})  # fmt: skip
    assert "逐晚价格 520 + 570" in result.output and "合计 1970 元" in result.output
    default = await run()
    assert "520 元/晚 × 1 晚 = 520 元（未说明住几晚，按 1 晚计）" in default.output


# -- instruction cues, each on and off ----------------------------------------------------------
async def test_no_tools_cue():
    off = await run(instructions=INSTRUCTIONS + "\n本次对话不要调用任何工具。")
    assert off.tool_calls == [] and "不调用任何工具" in off.output
    assert an.travel.ungrounded_claims(off.session) == []
    assert len((await run()).tool_calls) == 4


async def test_tools_first_cue_decides_whether_fabricate_invents():
    weak = await run(instructions=without("必须使用工具"), model=TravelModel("fabricate"))
    assert weak.tool_calls == [] and an.travel.ungrounded_claims(weak.session)
    strict = await run(model=TravelModel("fabricate"))
    assert len(strict.tool_calls) == 4 and an.travel.ungrounded_claims(strict.session) == []


async def test_stop_when_enough_cue():
    loose = await run(instructions=without("不要重复查询"))
    assert names(loose) == ["search_flights"] * 2 + ["search_weather"] * 2 + ["search_hotels"] * 2
    assert loose.stop_reason == "max_iterations" and "MU5101" in loose.output
    patient = await run(instructions=without("不要重复查询"), max_iterations=10)
    assert len(patient.tool_calls) == 7 and patient.stop_reason == "final_answer"
    tight = await run()
    assert len(tight.tool_calls) == 4 and tight.stop_reason == "final_answer"


async def test_output_rules_cue():
    plain = await run(instructions=without("输出规范"))
    assert plain.output.count("\n") == 0 and "08:00" not in plain.output
    assert "MU5101" in plain.output and "合计 1400 元，在预算内" in plain.output
    only_flights = await run(
        instructions=without("输出规范") + "\n输出规范：最终回答必须列出航班号与起降时间。"
    )
    assert "08:00" in only_flights.output and "°C" not in only_flights.output
    assert "住全季酒店(北京国贸店)" in only_flights.output  # the rest in one summary line
    full = await run()
    for fact in ("08:00", "-3～5°C", "520 元/晚", "在 3000 元预算内"):
        assert fact in full.output


async def test_answer_language_cue():
    english = await run(instructions=INSTRUCTIONS + "\n请用英文回答。")
    assert "Flight: MU5101" in english.output and "元" not in english.output
    assert calls(english)[0][1]["departure"] == "上海"  # the tools still get the user's words
    chinese = await run(
        ARTICLE_REQUESTS["en"], instructions=INSTRUCTIONS_EN + "\nAnswer in Chinese."
    )
    assert "航班：推荐 MU5101" in chinese.output


@pytest.mark.parametrize("cue", [True, False])
async def test_budget_alternatives_cue(cue):
    text = "我周五从上海去北京出差，帮我看看航班和酒店，预算1300以内"
    result = await run(text, instructions=INSTRUCTIONS if cue else without("备选方案"))
    assert names(result).count("calculate_cost") == (2 if cue else 1)
    assert "超出 1300 元预算 100 元" in result.output
    assert ("备选方案" in result.output) is cue


@pytest.mark.parametrize("cue", [True, False])
async def test_error_advice_cue_offers_the_next_day(cue):
    desk = TravelTools(timeout=0.05)
    desk.inject("search_flights", "upstream_error", date="周五")  # Friday only
    instructions = INSTRUCTIONS if cue else without("返回 error")
    result = await travel_agent(tools=desk, instructions=instructions).run(ASK)
    dates = [args["date"] for name, args in calls(result) if name == "search_flights"]
    assert dates == (["周五", "2025-01-11"] if cue else ["周五"])
    if cue:  # article 000 §5.2's degraded answer
        assert "周五航班暂时不可用（上游服务出错），周六有航班" in result.output
    else:
        assert "航班：暂时无法获取（上游服务出错）" in result.output and "周六" not in result.output


async def test_hints_in_tool_results_stop_the_rechecks():
    loose = without("不要重复查询")
    hinted = await travel_agent(tools=TravelTools(hints=True), instructions=loose).run(ASK)
    assert len(hinted.tool_calls) == 4 and hinted.stop_reason == "final_answer"
    assert "无需重复查询" in json.loads(hinted.messages[2].content)["hint"]


@pytest.mark.parametrize("fault", an.travel.FAULTS)
async def test_failures_reach_the_user_in_the_users_language(fault):
    for language, text in (("zh", ASK), ("en", ARTICLE_REQUESTS["en"])):
        desk = TravelTools(timeout=0.02)
        desk.inject("search_weather", fault)
        result = await travel_agent(tools=desk, language=language).run(text)
        line = next(x for x in result.output.splitlines() if x.startswith(("天气", "Weather")))
        if language == "zh":
            assert not re.findall(r"[A-Za-z]{4,}", result.output), result.output
        else:
            assert not re.findall(r"[\u4e00-\u9fff]", line), line
        assert "Error" not in line and "HTTP" not in line


async def test_out_of_range_and_unreadable_dates_are_said_plainly():
    far = await run("3月1日北京天气")
    assert "超出了可查询的日期范围（2025-01-06 至 2025-02-02）" in far.output
    vague = await run("下个月从上海去北京出差")
    assert vague.tool_calls == [] and "请问具体是哪一天" in vague.output


async def test_descriptions_tell_an_unnamed_tool_and_its_parameters_apart():
    desk = TravelTools()

    async def query(a: str, b: str) -> dict:
        """查询某个城市某天的天气。

        Args:
            a: 城市名
            b: 日期，格式为 YYYY-MM-DD
        """
        return await desk.search_weather(a, b)

    result = await run("北京周五天气怎么样", tools=[an.Tool(query)])
    assert calls(result) == [("query", {"a": "北京", "b": "2025-01-10"})]
    assert "北京 2025-01-10（周五）晴" in result.output
