"""The four tools with article 000's own schemas (§1.2, §2.2), over the same data.

Article 000 declares ``search_flights(departure, destination, date)`` with "日期，格式为
YYYY-MM-DD", and ``search_hotels(city, date)``: no ``nights``. Offered these schemas, the
embedded model sends ISO dates (2025-01-10) and prices a stay at the first night's rate ×
nights, so "住两晚" reproduces the article's table exactly: 880 + 520 × 2 = 1920 (§4.2)::

    agent = an.travel.travel_agent(schemas="article")

The default schemas (``schemas="agentnb"``) take relative dates and a ``nights`` parameter;
there a two-night stay is priced night by night (Saturday costs 570 in the data: 1970).
"""

from __future__ import annotations

from typing import Any

from ..tools.tool import Tool
from .tools import CostItem, TravelTools

__all__ = ["article_tools"]


def article_tools(desk: TravelTools) -> list[Tool]:
    """Article 000's tool schemas, each calling ``desk`` (faults and ``today`` included)."""

    async def search_flights(departure: str, destination: str, date: str) -> dict[str, Any]:
        """查询指定日期从出发地到目的地的航班列表

        Args:
            departure: 出发地城市名
            destination: 目的地城市名
            date: 日期，格式为 YYYY-MM-DD
        """
        return await desk.search_flights(departure, destination, date)

    async def search_weather(city: str, date: str) -> dict[str, Any]:
        """查询城市在某天的天气状况和温度

        Args:
            city: 城市名
            date: 日期，格式为 YYYY-MM-DD
        """
        return await desk.search_weather(city, date)

    async def search_hotels(city: str, date: str) -> dict[str, Any]:
        """查询城市在某天可预订的酒店及当晚价格

        Args:
            city: 城市名
            date: 入住日期，格式为 YYYY-MM-DD
        """
        return await desk.search_hotels(city, date)

    async def calculate_cost(items: list[CostItem], budget: float | None = None) -> dict[str, Any]:
        """计算一组费用明细的总额

        Args:
            items: 费用明细
            budget: 预算上限（可选）
        """
        return await desk.calculate_cost(items, budget)

    fns = (search_flights, search_weather, search_hotels, calculate_cost)
    return [Tool(fn, timeout=desk.timeout) for fn in fns]
