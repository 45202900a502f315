"""The one grounding check passes every reply of the stand-in that states no figure from outside
its tool results (issues 23 and 25): the canned questions' examples ("例如 1月10日") claim nothing,
and every answer's figures come from a tool, the user or the instructions."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb.models.request import ModelRequest
from agentnb.testing import ungrounded_figures
from agentnb.travel import (
    ARTICLE_REQUESTS,
    FAULTS,
    INSTRUCTIONS,
    TravelModel,
    TravelTools,
    travel_agent,
)

from .test_phrasings import ROWS as PHRASINGS

TOOLS = ("search_flights", "search_weather", "search_hotels", "calculate_cost")
EXTRA = ["超出预算就停止。", "预算不足时给出备选方案。", "缺少城市、日期和晚数时一起问。", "缺少日期时默认明天。",
         "日期是相对说法时先问具体日期。", "用表格给出结果。", "预订前先和用户确认。", "不要调用任何工具。",
         "回答要简短。", "今天是 2025-01-13。"]  # fmt: skip


def grounded(result: an.RunResult) -> list[str]:
    return ungrounded_figures(result.session)


async def test_every_phrasing_row_and_every_task_answers_from_its_sources():
    loose = {}
    for row in PHRASINGS:
        agent, session = travel_agent(), an.Session()
        for earlier in row["history"]:
            await agent.run(earlier, session=session)
        result = await agent.run(row["text"], session=session)
        if grounded(result):
            loose[row["id"]] = (grounded(result), result.output)
    for task in an.travel.task_set():
        agent, session = travel_agent(), an.Session()
        for earlier in task.history:
            await agent.run(earlier, session=session)
        result = await agent.run(task.input, session=session)
        if grounded(result):
            loose[task.name] = (grounded(result), result.output)
    assert loose == {}


@pytest.mark.parametrize("line", EXTRA)
async def test_every_knob_shaped_answer_is_grounded(line):
    agent = travel_agent(instructions=INSTRUCTIONS + "\n" + line)
    for request in (ARTICLE_REQUESTS["000"], "帮我订周五北京的酒店，预算300", "下个月去北京"):
        result = await agent.run(request, session=an.Session())
        assert grounded(result) == [], result.output


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("fault", FAULTS)
async def test_answers_after_a_fault_are_grounded(tool, fault):
    # the desk's own per-tool timeout applies (tool_timeout is only the agent's default)
    agent = travel_agent(tools=TravelTools(faults={tool: fault}, timeout=0.2))
    result = await agent.run(ARTICLE_REQUESTS["000"], session=an.Session())
    assert grounded(result) == [], result.output


@pytest.mark.parametrize("mode", ["loop", "hallucinate_tool", "wrong_args", "malformed_json",
                                  "ghost_call", "mismatched_id"])  # fmt: skip
async def test_the_pitfalls_that_do_not_invent_figures_stay_grounded(mode):
    agent = travel_agent(model=TravelModel(misbehave=mode))
    result = await agent.run(ARTICLE_REQUESTS["000"], session=an.Session())
    assert grounded(result) == [], result.output


@pytest.mark.parametrize(("code", "extra"), [
    ("bad_date", {"date": "01/10/2025"}),
    ("date_out_of_range", {"date": "2025-03-01", "first_day": "2025-01-06",
                           "last_day": "2025-02-02"}),
    ("stay_out_of_range", {"last_day": "2025-02-02"}),
    ("unknown_city", {"city": "示例城A"}),
])  # fmt: skip
@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_date_and_city_error_replies_are_grounded(code, extra, language):
    text = "周五北京的天气" if language == "zh" else "Weather in Beijing on Friday"
    args = {"city": "北京", "date": "周五"}
    result = {"ok": False, "kind": "tool_error", "code": code, "error": "x", **extra}
    messages = [
        {"role": "system", "content": "不要重复查询。"},
        {"role": "user", "content": text},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function",
         "function": {"name": "search_weather", "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": "c0", "content": json.dumps(result, ensure_ascii=False)},
    ]  # fmt: skip
    tools = travel_agent().tools.schemas()
    reply = TravelModel().reply(ModelRequest(messages, tools))
    assert reply.content and not reply.tool_calls
    assert ungrounded_figures([*messages, reply.wire()]) == [], reply.content


@pytest.mark.parametrize("request_text", ["帮我订北京的酒店", "我想从上海飞北京", "下个月去北京出差",
                                          "Book me a hotel in Beijing.", "Flights to Beijing next month",
                                          "你好", "hello"])  # fmt: skip
async def test_the_canned_questions_examples_claim_nothing(request_text):
    result = await travel_agent().run(request_text, session=an.Session())
    assert result.tool_calls == [] and grounded(result) == [], result.output  # it asked
