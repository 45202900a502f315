"""Bug: the wrap-up answer (max_iterations) dropped the sections it never looked up."""

from __future__ import annotations

from agentnb.travel import (
    ARTICLE_REQUESTS,
    TravelModel,
    load,
    travel_agent,
    ungrounded_claims,
)
from agentnb.travel.model.answer import compose_answer
from agentnb.travel.model.intent import parse_request

ASK, ASK_EN = ARTICLE_REQUESTS["000"], ARTICLE_REQUESTS["en"]


# -- the wrap-up answer dropped the sections it never looked up -----------------------------
async def test_wrap_up_answer_drops_sections_silently():
    looping = TravelModel("loop")
    zh = await travel_agent(looping, repeat_limit=0).run(ASK)
    assert zh.stop_reason == "max_iterations" and zh.output
    assert "天气：未查询（在调用次数上限前没有查到）。" in zh.output
    assert "酒店：未查询（在调用次数上限前没有查到）。" in zh.output
    assert "°C" not in zh.output and "元/晚" not in zh.output
    assert "预算：还没有用工具算出总价（调用次数已到上限），暂不下结论。" in zh.output
    assert ungrounded_claims(zh.session) == []
    en = await travel_agent(looping, repeat_limit=0, language="en").run(ASK_EN)
    assert "Weather: not looked up (the call limit was reached first)." in en.output
    assert "Hotel: not looked up (the call limit was reached first)." in en.output


def test_wrap_up_answer_drops_sections_and_an_ordinary_answer_says_not_looked_up():
    """Outside the wrap-up call a section with no result at all is still named, without a reason
    it cannot know."""
    data = load()
    req = parse_request("我周五从上海去北京出差，帮我看看航班和天气", data)
    answer = compose_answer(req, [], data)
    assert answer.splitlines() == ["航班：未查询。", "天气：未查询。"]
