"""The model reads plain OpenAI tool schemas (dicts), never Python tools (issue #8)."""

from __future__ import annotations

import json

import pytest

from agentnb.models import ModelRequest
from agentnb.travel import INSTRUCTIONS, TravelModel
from agentnb.travel.model.schemas import read_menu


def schema(name: str, description: str, **params: str) -> dict:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    return {"type": "function", "function": {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties}}}  # fmt: skip


@pytest.mark.parametrize(
    "params,expected",
    [
        ({"departure": "出发地", "destination": "目的地", "date": "日期"},
         {"origin": "departure", "destination": "destination", "date": "date"}),
        ({"from_city": "", "to_city": "", "day": ""},
         {"origin": "from_city", "destination": "to_city", "date": "day"}),
        ({"departure_date": "", "origin": "", "dest": ""},
         {"date": "departure_date", "origin": "origin", "destination": "dest"}),
        ({"x": "出发城市", "y": "到达城市", "z": "出发日期，格式为 YYYY-MM-DD"},
         {"origin": "x", "destination": "y", "date": "z"}),
    ],
)  # fmt: skip
def test_flight_parameters_are_matched_by_name_then_description(params, expected):
    menu = read_menu([schema("search_flights", "查询航班", **params)])
    spec = menu.get("flights")
    assert spec is not None and spec.slots == expected


def test_date_format_follows_the_description():
    def iso(description: str) -> bool:
        spec = read_menu([schema("search_weather", "天气", city="城市", date=description)])
        return spec.get("weather").iso_dates  # type: ignore[union-attr]

    assert iso("日期，格式为 YYYY-MM-DD")
    assert not iso("日期，YYYY-MM-DD，或 周五、明天 等相对日期")
    assert not iso("日期")


def test_a_request_of_plain_dicts_is_all_the_model_needs():
    request = ModelRequest(
        [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": "北京周五天气"}],
        [schema("get_forecast", "天气预报", where="城市", when="日期，格式为 YYYY-MM-DD")],
    )
    reply = TravelModel().reply(request)
    (call,) = reply.tool_calls or []
    assert call.function.name == "get_forecast"
    assert json.loads(call.function.arguments) == {"where": "北京", "when": "2025-01-10"}
    # A tool the request does not offer is never called.
    only_hotels = ModelRequest(request.messages, [schema("search_hotels", "酒店", city="城市")])
    answer = TravelModel().reply(only_hotels)
    assert not answer.tool_calls and "没有可用的天气查询工具" in (answer.content or "")
