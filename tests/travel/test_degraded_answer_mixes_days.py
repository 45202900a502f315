"""Bug: the degraded answer (000 §5.2) mixed Friday's hotel and weather with Saturday's flight."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb.travel import (
    ARTICLE_REQUESTS,
    INSTRUCTIONS,
    TravelModel,
    TravelTools,
    travel_agent,
    ungrounded_claims,
)

ASK, ASK_EN = ARTICLE_REQUESTS["000"], ARTICLE_REQUESTS["en"]


def cost_items(result: an.RunResult) -> list[list[str]]:
    return [
        [i["label"] for i in json.loads(c.function.arguments)["items"]]
        for c in result.tool_calls
        if c.function.name == "calculate_cost"
    ]


def line(result: an.RunResult, start: str) -> str:
    return next(x for x in result.output.splitlines() if x.startswith(start))


# -- the degraded answer mixed Friday's hotel and weather with Saturday's flight -----------
@pytest.mark.parametrize("fault", ["upstream_error", "empty"])
async def test_degraded_answer_mixes_days(fault):
    desk = TravelTools(timeout=0.05)
    desk.inject("search_flights", fault, date="周五")
    result = await travel_agent(tools=desk).run(ASK)
    lines = result.output.splitlines()
    reason = "上游服务出错" if fault == "upstream_error" else "当天没有航班"
    assert lines[0] == f"航班：周五航班暂时不可用（{reason}），周六有航班，是否调整行程？"
    assert lines[1].startswith("备选（需改到周六）：MU5101（中国东方航空），2025-01-11（周六）")
    assert "720 元" in lines[1] and not any(x.startswith("航班：推荐") for x in lines)
    assert (
        lines[3]
        == "（以下天气、酒店和预算仍按原定的周五；若改到周六，需要重新查询周六的天气和酒店。）"
    )
    assert "2025-01-10（周五）晴" in line(result, "天气：")  # the weather of the day asked
    assert line(result, "酒店：").startswith("酒店：2025-01-10（周五）入住，全季酒店")
    # the total prices the trip as asked: the hotel alone, never Saturday's flight
    assert cost_items(result) == [["酒店 全季酒店(北京国贸店)"]]
    assert line(result, "预算：") == (
        "预算：不含机票（周五航班暂不可用），520 = 合计 520 元，在 3000 元预算内（剩余 2480 元）。"
    )
    assert lines[-1] == "若改乘周六航班，需另付机票 720 元，酒店也要按周六重新查询后再算总价。"
    assert "1240" not in result.output
    assert ungrounded_claims(result.session) == []
    assert result.stop_reason == "final_answer"


async def test_degraded_answer_mixes_days_in_english():
    desk = TravelTools(timeout=0.05)
    desk.inject("search_flights", "upstream_error", date="周五")
    result = await travel_agent(tools=desk, language="en").run(ASK_EN)
    lines = result.output.splitlines()
    assert lines[0].startswith("Flights: this Friday is unavailable (the service failed)")
    assert lines[1].startswith("Alternative (if you move to Saturday): MU5101")
    assert "2025-01-10 (Fri)" in line(result, "Weather:")
    assert cost_items(result) == [["hotel JI Hotel Guomao"]]
    budget = line(result, "Budget:")
    assert "without the flight (this Friday is unavailable), 520 = 520 CNY" in budget
    assert "Moving to Saturday adds the 720 CNY fare" in result.output
    assert "1240" not in result.output and ungrounded_claims(result.session) == []


async def test_degraded_answer_mixes_days_without_output_rules():
    """No output rules (a one-line summary): the other day's flight is still not summed up."""
    desk = TravelTools(timeout=0.05)
    desk.inject("search_flights", "upstream_error", date="周五")
    plain = "\n".join(x for x in INSTRUCTIONS.splitlines() if "输出规范" not in x)
    result = await travel_agent(tools=desk, instructions=plain).run(ASK)
    assert result.output.startswith("航班：周五航班暂时不可用（上游服务出错），周六有航班")
    assert "推荐航班 MU5101" not in result.output and "1240" not in result.output
    assert "预算：不含机票（周五航班暂不可用）" in result.output


def test_degraded_answer_mixes_days_is_documented_in_the_rule_table():
    row = TravelModel.rules()["error_advice"]
    assert "alternative" in row["with it"] and "asked day" in row["with it"]
    assert "same day" in row["with it"]
