"""Bug: a contradictory '周五航班暂时不可用…周五有航班' line after the model corrected its own mistake."""

from __future__ import annotations

import json

import pytest

from agentnb.travel import (
    ARTICLE_REQUESTS,
    TravelModel,
    TravelTools,
    load,
    travel_agent,
)
from agentnb.travel.model.answer import compose_answer
from agentnb.travel.model.intent import parse_request
from agentnb.travel.model.observations import Observation
from tests.helpers import assert_valid_conversation

ASK, ASK_EN = ARTICLE_REQUESTS["000"], ARTICLE_REQUESTS["en"]


# -- a contradictory line after the model corrects its own mistake -------------------------
@pytest.mark.parametrize("mode", ["hallucinate_tool", "wrong_args", "malformed_json"])
async def test_contradictory_line_after_self_correction(mode):
    for text, unavailable in ((ASK, "暂时不可用"), (ASK_EN, "unavailable")):
        result = await travel_agent(TravelModel(mode)).run(text)
        assert_valid_conversation(result.session.to_openai())
        assert unavailable not in result.output and "调整行程" not in result.output
        assert "Shall I change" not in result.output
        assert result.output.splitlines()[0].startswith(("航班：推荐 MU5101", "Flight: MU5101"))


async def test_contradictory_line_after_self_correction_names_the_days_own_failure():
    """The model's mistake first, then Friday's upstream error: the line gives the day's reason."""
    desk = TravelTools(timeout=0.05)
    desk.inject("search_flights", "upstream_error", date="周五")
    result = await travel_agent(TravelModel("wrong_args"), tools=desk).run(ASK)
    first = result.output.splitlines()[0]
    assert first == "航班：周五航班暂时不可用（上游服务出错），周六有航班，是否调整行程？"


def test_contradictory_line_after_self_correction_not_after_a_same_day_retry():
    """A timeout, then the same call succeeds: the day did not fail, nothing to adjust."""
    data = load()
    req = parse_request("我周五从上海去北京出差，帮我看看航班", data)
    args = json.dumps({"departure": "上海", "destination": "北京", "date": "周五"})
    flights = {"date": "2025-01-10", "weekday": "周五", "departure": "上海", "destination": "北京",
               "flights": [{"flight_no": "MU5101", "airline": "中国东方航空", "departure_time": "08:00",
                            "arrival_time": "10:15", "departure_airport": "上海虹桥",
                            "arrival_airport": "北京首都", "price": 880, "seats_left": 18}]}  # fmt: skip
    obs = [
        Observation.read("search_flights", args, json.dumps({"ok": False, "kind": "timeout"})),
        Observation.read("search_flights", args, json.dumps(flights, ensure_ascii=False)),
    ]
    answer = compose_answer(req, obs, data)
    assert answer.startswith("航班：推荐 MU5101") and "不可用" not in answer
