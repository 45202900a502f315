"""Two tools alike in all but their descriptions: where the description decides the choice.

Article 002 §2.3: 「描述往往比Schema本身更影响工具选择准确率」 (the description often matters
more for choosing the right tool than the schema itself). ``lookalike_tools(descriptions)``
makes ``lookup_a`` (the weather) and ``lookup_b`` (the hotels) with names that say nothing and
one parameter schema for both (``city``, ``date``): only the descriptions tell them apart.
``schema="rich"`` gives both a stricter, better documented schema (an enum of cities, ``format:
date``, no extra fields) that still says nothing about which tool does what.
``description_tasks()`` asks for a forecast or a hotel; each task's check names the tool that
answers it, so a variant that picks the wrong tool, or none, fails.

    tools = an.travel.lookalike_tools(an.travel.DESCRIPTIONS["clear"])
    agent = an.travel.travel_agent().copy(tools=tools)

The stand-in tells a tool's role from its name, else its description (``TravelModel.rules()``,
``offered_tools_only``), never from its parameters: it follows the article here by design. A
real model's numbers will differ; the lesson is the shape of the test: tools alike, the
descriptions changed one at a time, every choice checked.
"""

from __future__ import annotations

from typing import Any

from ..evals.checks import calls, grounded
from ..evals.tasks import Task, TaskSet
from ..tools import Tool
from .tools import TravelTools

__all__ = ["DESCRIPTIONS", "description_tasks", "lookalike_tools"]

#: Description sets for (lookup_a = the weather, lookup_b = the hotels).
DESCRIPTIONS: dict[str, dict[str, str]] = {
    "clear": {
        "lookup_a": "查询城市在某天的天气（天气状况、气温、降水概率）。",
        "lookup_b": "查询城市可预订的酒店及每晚价格。",
    },
    "vague": {"lookup_a": "查询城市在某天的信息。", "lookup_b": "查询城市在某天的数据。"},
    "swapped": {
        "lookup_a": "查询城市可预订的酒店及每晚价格。",
        "lookup_b": "查询城市在某天的天气（天气状况、气温、降水概率）。",
    },
}

_CITY = {"type": "string", "description": "城市名，如 北京"}
_DATE = {"type": "string", "description": "日期，YYYY-MM-DD，或 周五、明天 等相对日期"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "plain": {
        "type": "object",
        "properties": {"city": _CITY, "date": _DATE},
        "required": ["city", "date"],
    },
    "rich": {
        "type": "object",
        "properties": {
            "city": {**_CITY, "enum": ["北京", "上海", "杭州", "广州", "成都", "深圳"]},
            "date": {"type": "string", "format": "date", "description": "日期，YYYY-MM-DD"},
        },
        "required": ["city", "date"],
        "additionalProperties": False,
    },
}


def lookalike_tools(descriptions: dict[str, str], schema: str = "plain") -> list[Tool]:
    """``lookup_a`` (weather) and ``lookup_b`` (hotels), one schema, these descriptions."""
    travel = TravelTools()

    async def weather(city: str, date: str) -> dict[str, Any]:
        return await travel.search_weather(city=city, date=date)

    async def hotels(city: str, date: str) -> dict[str, Any]:
        return await travel.search_hotels(city=city, check_in_date=date)

    params = SCHEMAS[schema]
    return [
        Tool(weather, name="lookup_a", description=descriptions["lookup_a"], parameters=params),
        Tool(hotels, name="lookup_b", description=descriptions["lookup_b"], parameters=params),
    ]


_ASKED = [
    ("weather-beijing", "北京周五天气怎么样？", "lookup_a"),
    ("weather-hangzhou", "杭州明天会下雨吗？", "lookup_a"),
    ("weather-shanghai", "上海下周一冷不冷？", "lookup_a"),
    ("hotel-beijing", "帮我找一家北京周五入住的酒店。", "lookup_b"),
    ("hotel-shanghai", "上海明天有什么便宜的酒店？", "lookup_b"),
    ("hotel-hangzhou", "杭州周六住一晚，有哪些酒店？", "lookup_b"),
]


def description_tasks() -> TaskSet:
    """Six requests, each answered by one of the look-alike tools (its check names it)."""
    return TaskSet(
        [
            Task(name=n, input=q, checks=[calls(tool), grounded()], tags=["zh"])
            for n, q, tool in _ASKED
        ],
        name="descriptions",
    )
