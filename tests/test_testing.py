"""agentnb.testing.ungrounded_figures: figures of a final answer that no tool result gave."""

from __future__ import annotations

import json

import agentnb as an
from agentnb.testing import ungrounded_figures
from tests.helpers import call, calls

REQUEST = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"


def conversation(answer: str, result: dict, user: str = "明天示例城A会下雨吗？") -> list[dict]:
    return [
        {"role": "user", "content": user},
        calls(call("w1", "get_weather", city="示例城A")),
        {"role": "tool", "tool_call_id": "w1", "content": json.dumps(result, ensure_ascii=False)},
        {"role": "assistant", "content": answer},
    ]


def test_a_grounded_travel_answer_has_no_flag_and_a_fabricated_one_is_caught():
    session = an.Session()
    an.travel.travel_agent().run_sync(REQUEST, session=session)
    assert ungrounded_figures(session) == []
    liar = an.Agent(model=an.travel.TravelModel(misbehave="fabricate"))
    result = liar.run_sync(REQUEST, session=an.Session())
    flagged = ungrounded_figures(result)
    assert "CA1234" in flagged and "650" in flagged
    assert all(f in result.output for f in flagged)


def test_generic_figures_by_value_percent_dates_codes():
    result = {"city": "示例城A", "date": "2025-01-10", "rain_prob": 0.8, "station": "ZSA07",
              "temp_c": 12.0, "advice": "带伞"}  # fmt: skip
    ok = "示例城A 2025-01-10 降雨概率 80%，12 °C，测站 ZSA07：带伞。"
    assert ungrounded_figures(conversation(ok, result)) == []
    bad = "示例城A 2025-01-11 降雨概率 95%，12.5 °C，测站 ZSB99，湿度 64。"
    assert ungrounded_figures(conversation(bad, result)) == [
        "2025-01-11",
        "95%",
        "12.5",
        "ZSB99",
        "64",
    ]


def test_thousands_separators_user_figures_and_small_counts():
    result = {"total": 3000.0, "items": 3}
    answer = "合计 3,000 元，共 3 项，在预算 5000 内，第 2 晚另计 18:30 前入住。"
    assert ungrounded_figures(conversation(answer, result, user="预算5000")) == ["18:30"]


def test_no_final_answer_no_flags():
    msgs = conversation("x", {})[:-1]
    assert ungrounded_figures(msgs) == []  # ends in a tool result
    assert ungrounded_figures([]) == []
    assert ungrounded_figures([{"role": "assistant", "content": "MU5101"}]) == ["MU5101"]


def test_grounding_reads_content_parts_by_the_one_text_rule():
    """A tool result given as content parts grounds the answer's figures, for the façade and
    the check alike (the check JSON-dumped the parts; the façade joined their texts)."""
    msgs = conversation("CA1234 起飞", {})
    msgs[2]["content"] = [{"type": "text", "text": "航班 CA1234"}]
    assert ungrounded_figures(msgs) == []
    msgs[-1]["content"] = [{"type": "text", "text": "CA1234 与 MU5101"}]
    assert ungrounded_figures(msgs) == ["MU5101"]
    assert an.testing.ungrounded_figures is an.checks.ungrounded_figures  # one check, two doors
