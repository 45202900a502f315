from __future__ import annotations

import asyncio
import json

import pytest

import agentnb as an
from agentnb.travel import CostItem, TravelTools


@pytest.fixture
def desk():
    return TravelTools(timeout=0.05)


async def test_flights_normalise_relative_dates_and_return_structured_json(desk):
    result = await desk.search_flights("上海", "北京", "周五")
    assert result["date"] == "2025-01-10" and result["weekday"] == "周五"
    first = result["flights"][0]
    assert first == {
        "flight_no": "MU5101",
        "airline": "中国东方航空",
        "departure_airport": "上海虹桥",
        "departure_airport_code": "SHA",
        "arrival_airport": "北京首都",
        "arrival_airport_code": "PEK",
        "departure_time": "08:00",
        "arrival_time": "10:15",
        "price": 880,
        "seats_left": first["seats_left"],
    }
    times = [f["departure_time"] for f in result["flights"]]
    assert times == sorted(times)
    assert (await desk.search_flights("Shanghai", "beijing", "2025-01-10"))["flights"] == result[
        "flights"
    ]


async def test_no_direct_flights_says_why(desk):
    result = await desk.search_flights("上海", "杭州", "周五")
    assert result["flights"] == [] and "high-speed rail" in result["note"]


async def test_unknown_city_lists_the_known_ones(desk):
    with pytest.raises(an.ToolError) as info:
        await desk.search_weather("拉萨", "周五")
    assert "unknown city '拉萨'" in info.value.message
    assert "北京" in info.value.hint and "Do not invent" in info.value.hint
    assert "上海" in info.value.data["known_cities"]


async def test_dates_outside_the_data_are_refused(desk):
    with pytest.raises(an.ToolError, match="the dataset covers 2025-01-06 to 2025-02-02"):
        await desk.search_weather("北京", "2025-06-01")
    with pytest.raises(an.ToolError, match="cannot read the date"):
        await desk.search_weather("北京", "someday")


async def test_hotels_near_a_landmark_for_several_nights(desk):
    result = await desk.search_hotels("杭州", "周六", nights=2, near="西湖")
    assert result["check_in"] == "2025-01-11" and result["nights"] == 2
    distances = [h["distance_km"] for h in result["hotels"]]
    assert distances == sorted(distances) and all(h["landmark"] == "西湖" for h in result["hotels"])
    assert all(h["total_price"] >= h["price_per_night"] for h in result["hotels"])
    english = await desk.search_hotels("Hangzhou", "Saturday", near="West Lake")
    assert english["hotels"][0]["name"] == "西湖边精品酒店A"
    nowhere = await desk.search_hotels("北京", "周五", near="月球")
    assert "no hotel is listed near" in nowhere["note"] and nowhere["hotels"]


async def test_calculate_cost_with_budget(desk):
    items = [
        CostItem(label="机票 MU5101", unit_price=880),
        CostItem(label="酒店 全季", unit_price=520, quantity=2),
    ]
    result = await desk.calculate_cost(items, budget=3000)
    assert result["total"] == 1920 and result["within_budget"] and result["remaining"] == 1080
    over = await desk.calculate_cost(items, budget=1000)
    assert over["within_budget"] is False and over["remaining"] == -920


@pytest.mark.parametrize(
    "fault,kind,text",
    [
        ("timeout", "timeout", "timed out after 0.05 s"),
        (
            "upstream_error",
            "tool_error",
            "UpstreamError: search_weather: upstream service returned HTTP 502",
        ),
        ("rate_limit", "tool_error", "rate limited"),
    ],
)
async def test_injected_faults_reach_the_model_as_structured_errors(desk, fault, kind, text):
    desk.inject("search_weather", fault)
    model = an.models.ScriptedModel(
        [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "w",
                        "type": "function",
                        "function": {
                            "name": "search_weather",
                            "arguments": json.dumps({"city": "北京", "date": "周五"}),
                        },
                    }
                ],
            },
            "天气暂时不可用。",
        ]
    )
    result = await an.travel.travel_agent(model, tools=desk).run("北京周五天气")
    finished = result.trace.of_type(an.events.ToolFinished)[0]
    assert finished.kind == kind and text in finished.content
    assert json.loads(finished.content)["ok"] is False


async def test_empty_fault_and_healing(desk):
    desk.inject("search_flights", "empty")
    assert (await desk.search_flights("上海", "北京", "周五"))["flights"] == []
    desk.clear()
    assert (await desk.search_flights("上海", "北京", "周五"))["flights"]
    with pytest.raises(ValueError, match="unknown fault"):
        desk.inject("search_flights", "meteor")
    with pytest.raises(ValueError, match="unknown travel tool"):
        desk.inject("book_flight", "timeout")


def test_schemas_describe_every_parameter():
    for t in TravelTools().tools:
        assert t.description
        for name, spec in t.parameters["properties"].items():
            assert spec.get("description") or name == "items", (t.name, name)
    schema = TravelTools().tools[3].parameters
    assert schema["$defs"]["CostItem"]["properties"]["unit_price"]["minimum"] == 0


def test_timeout_fault_really_cancels(desk):
    desk.inject("search_hotels", "timeout")

    async def go():
        with pytest.raises(asyncio.TimeoutError):
            async with asyncio.timeout(0.05):
                await desk.search_hotels("北京", "周五")

    asyncio.run(go())
