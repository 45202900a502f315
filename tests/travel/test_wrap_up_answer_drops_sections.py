"""Bug: the wrap-up answer (max_iterations) dropped the sections it never looked up."""

from __future__ import annotations

from agentnb.travel import (
    ARTICLE_REQUESTS,
    TravelModel,
    travel_agent,
    ungrounded_claims,
)

ASK, ASK_EN = ARTICLE_REQUESTS["000"], ARTICLE_REQUESTS["en"]


# -- the wrap-up answer dropped the sections it never looked up -----------------------------
async def test_wrap_up_answer_drops_sections_silently():
    looping = TravelModel("loop")
    zh = await travel_agent(looping, repeat_limit=0).run(ASK)
    assert zh.stop_reason == "max_iterations" and zh.output
    assert "天气：未查询（在调用次数上限前没有查到）。" in zh.output
    assert "酒店：未查询（在调用次数上限前没有查到）。" in zh.output
    assert "°C" not in zh.output and "元/晚" not in zh.output
    assert "预算：还没有用工具算出总价" in zh.output
    assert ungrounded_claims(zh.session) == []
    en = await travel_agent(looping, repeat_limit=0, language="en").run(ASK_EN)
    assert "Weather: not looked up (the call limit was reached first)." in en.output
    assert "Hotel: not looked up (the call limit was reached first)." in en.output
