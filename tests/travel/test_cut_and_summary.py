"""A simple cut loses the first turn's facts; a summary keeps them (002 §5.2, issue 42 #150).

The stand-in reads the "user asked" lines of a marked summary (``an.SummariseOldest``) as it
reads carried facts: slots for the current request (nights, budget), never a new request.
"""

from __future__ import annotations

import json

import agentnb as an

TURNS = [
    "我周五从上海去北京出差，住两晚，预算控制在1200以内，先帮我看看航班。",
    "北京周五天气怎么样？",
    "周五北京冷不冷？",
    "那周五上海呢？",
    "北京的酒店也帮我订一个，算一下总价。",
]


async def _last(policy: object | None) -> an.RunResult:
    agent = an.travel.travel_agent()
    if policy is not None:
        agent.context_window, agent.reply_reserve, agent.context = 1500, 300, policy
    session = an.Session()
    for turn in TURNS:
        result = await agent.run(turn, session=session)
    return result


def _hotel_args(result: an.RunResult) -> dict[str, object]:
    call = next(c for c in result.tool_calls if c.function.name == "search_hotels")
    loaded: dict[str, object] = json.loads(call.function.arguments)
    return loaded


async def test_a_simple_cut_loses_the_nights_and_the_budget():
    cut = await _last(an.KeepLastTurns(2))
    assert "nights" not in _hotel_args(cut) and "未说明住几晚" in cut.output
    assert "预算" not in cut.output


async def test_the_summary_keeps_them_as_the_whole_history_does():
    everything, summary = await _last(None), await _last(an.SummariseOldest())
    assert _hotel_args(summary)["nights"] == _hotel_args(everything)["nights"] == 2
    assert summary.output == everything.output
    assert "1090 元，在 1200 元预算内" in summary.output


async def test_a_summary_line_is_not_a_new_request():
    """The summary's old request (flights) adds no flight search to the hotel turn."""
    summary = await _last(an.SummariseOldest())
    assert [c.function.name for c in summary.tool_calls] == ["search_hotels", "calculate_cost"]
