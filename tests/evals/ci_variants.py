"""Variants for the CI runner's tests (``python -m agentnb eval ... --variants``)."""

from __future__ import annotations

import agentnb as an
from agentnb.travel import INSTRUCTIONS, TravelModel

TOOLS_FIRST = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\n"


def regressing():
    """The article's agent, and one without the tools-first rule on a fabricating model."""
    base = an.travel.travel_agent()
    worse = base.copy(
        instructions=INSTRUCTIONS.replace(TOOLS_FIRST, ""), model=TravelModel("fabricate")
    )
    return {"article": base, "no_tools_rule": worse}


def unchanged():
    base = an.travel.travel_agent()
    return {"article": base, "same": base.copy()}


def broken():
    """A variants factory that fails (a key missing from the environment, say)."""
    raise ValueError("OPENAI_API_KEY is not set")
