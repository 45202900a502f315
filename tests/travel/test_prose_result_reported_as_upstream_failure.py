"""Bug: a flight tool that answered in prose (ok, but not JSON) was reported as an upstream
failure ("暂时无法获取（上游服务出错）"), and the budget line did not say the fare was missing."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.travel import ARTICLE_REQUESTS, TravelTools, travel_agent


def prose_agent() -> an.Agent:
    """The travel agent with notebook 04's chatty flight tool: the same flights, as a sentence."""
    desk = TravelTools()

    async def search_flights(departure: str, destination: str, date: str) -> str:
        """查询指定日期从出发地到目的地的航班列表

        Args:
            departure: 出发地城市名
            destination: 目的地城市名
            date: 出发日期，YYYY-MM-DD，或 周五 等相对日期
        """
        found = await desk.search_flights(departure, destination, date)
        return "查到了，一切正常。" + "；".join(
            f"{f['flight_no']} {f['departure_time']} 起飞，{f['price']} 元"
            for f in found["flights"]
        )

    agent = travel_agent(tools=desk)
    agent.tools.remove("search_flights")
    agent.tools.add(an.Tool(search_flights))
    return agent


@pytest.mark.parametrize(
    ("ask", "flight", "budget"),
    [
        (
            ARTICLE_REQUESTS["000"],
            "航班：查到了结果，但不是结构化数据，无法读取票价。",
            "预算：不含机票（航班结果无法读取），520 = 合计 520 元",
        ),
        (
            ARTICLE_REQUESTS["en"],
            "Flights: the lookup returned a result, but not as structured data, so I cannot "
            "read the fares.",
            "Budget: without the flight (its result could not be read), 520 = 520 CNY",
        ),
    ],
)
async def test_prose_result_reported_as_upstream_failure(ask, flight, budget):
    result = await prose_agent().run(ask)
    assert result.stop_reason == "final_answer"
    assert "上游" not in result.messages[2].content  # the tool answered, in prose
    lines = result.output.splitlines()
    assert flight in lines
    assert not any(word in result.output for word in ("上游服务出错", "the service failed"))
    assert any(x.startswith(budget) for x in lines), lines
