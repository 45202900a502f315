"""Bug: a flights request that names one end of the route ("周五北京的航班") still asked for
both cities ("请告诉我出发城市和目的地"): it should ask only for the missing one."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.travel import travel_agent


@pytest.mark.parametrize(
    ("ask", "question"),
    [
        ("帮我看看周五北京的航班怎么样", "航班：请问从哪个城市出发去北京？告诉我出发城市，我再帮你查航班。"),
        ("周五从上海出发的航班有哪些", "航班：请问从上海去哪个城市？告诉我目的地，我再帮你查航班。"),
        ("show me Friday's flights to Beijing",
         "Flights: which city do you leave from for Beijing? Tell me, and I will search."),
        ("Friday flights from Shanghai?",
         "Flights: where do you fly to from Shanghai? Tell me, and I will search."),
        ("帮我看看周五的航班", "航班：请告诉我出发城市和目的地，我再帮你查航班。"),  # neither: both
    ],
)  # fmt: skip
async def test_named_destination_still_asks_both_cities(ask, question):
    result = await travel_agent().run(ask)
    assert result.output == question and not result.tool_calls


async def test_named_destination_then_the_origin_alone_finds_the_flights():
    session = an.Session()
    agent = travel_agent()
    await agent.run("帮我看看周五北京的航班怎么样", session=session)
    result = await agent.run("从上海出发", session=session)
    assert result.tool_calls[0].function.name == "search_flights"
    assert result.output.startswith("航班：推荐 ")
