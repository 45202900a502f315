"""Every reply explains itself (issue #16): its reasoning_content names rules of
TravelModel.rules(), states the facts it used (the date arithmetic is checked), is in the
user's language, and the decide stage's event says which rules fired."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

import agentnb as an
from agentnb.travel import MISBEHAVIOURS, TravelModel, TravelTools, resolve_date, travel_agent

RULES = set(TravelModel.rules())
ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[2] / "data" / "travel" /
        "phrasings.jsonl").read_text(encoding="utf-8").splitlines() if line]  # fmt: skip
TAG = re.compile(r"^\[([a-z][a-z0-9_]*)\] ", re.M)
WEEKDAYS = {"zh": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
            "en": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]}  # fmt: skip
TODAY = re.compile(r"\[today\] (?:今天是|today is) (\d{4}-\d{2}-\d{2})[（ (]+(\w+)[）)]+[，,] "
                   r"(.+?) → (\d{4}-\d{2}-\d{2})[（ (]+(\w+)[）)]")  # fmt: skip


def replies(session: an.Session) -> list[an.AssistantMessage]:
    return [m for m in session.messages if m.role == "assistant"]


def check_reasoning(message: an.AssistantMessage, language: str) -> list[str]:
    text = message.reasoning_content or ""
    lines = text.splitlines()
    assert lines, message
    rules = [TAG.match(line).group(1) for line in lines]  # every line names its rule
    assert set(rules) <= RULES, set(rules) - RULES
    if language == "zh":
        assert re.search(r"[\u4e00-\u9fff]", text), text
    for m in TODAY.finditer(text):  # the date arithmetic it states is right
        today, today_wd, word, day, wd = m.groups()
        names = WEEKDAYS[language]
        assert names[date.fromisoformat(today).weekday()] == today_wd
        assert resolve_date(word, date.fromisoformat(today)).isoformat() == day, m.group(0)
        assert names[date.fromisoformat(day).weekday()] == wd
    return rules


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
async def test_every_reply_of_the_phrasing_set_names_rules_of_the_table(row):
    agent, session = travel_agent(), an.Session()
    for earlier in row["history"]:
        await agent.run(earlier, session=session)
    result = await agent.run(row["text"], session=session)
    for message in replies(session):
        check_reasoning(message, "zh" if re.search(r"[\u4e00-\u9fff]", row["text"]) else "en")
    decided = result.trace.of_type(an.events.Decided)
    assert all(d.rules and set(d.rules) <= RULES and d.reasoning for d in decided)
    assert decided[-1].rules == tuple(dict.fromkeys(TAG.findall(decided[-1].reasoning)))


@pytest.mark.parametrize("mode", sorted(MISBEHAVIOURS))
async def test_every_pitfall_is_named_in_the_reasoning(mode):
    session = an.Session()
    if mode == "ghost_call":
        agent = travel_agent(model=TravelModel(misbehave=mode))
        await agent.run("周五北京的酒店", session=session)
        await agent.run("周六北京天气", session=session)
    elif mode == "fabricate":
        instructions = an.travel.INSTRUCTIONS.replace("不要编造航班、天气或酒店数据。", "")
        instructions = "\n".join(line for line in instructions.splitlines() if "必须" not in line)
        agent = travel_agent(model=TravelModel(misbehave=mode), instructions=instructions)
        await agent.run(an.travel.ARTICLE_REQUESTS["000"], session=session)
    elif mode == "guess_args":  # it guesses only what the user left out
        await travel_agent(model=TravelModel(misbehave=mode)).run("帮我查航班", session=session)
    elif mode == "gullible":  # it follows only an instruction it finds in a tool result
        from agentnb.travel.injection import ATTACKS, InjectedTravelTools

        desk = InjectedTravelTools()
        desk.plant("reviews", ATTACKS["budget"]["zh"].format(budget=9000), ("budget", 9000))
        model = TravelModel(misbehave=mode, seed=1)
        agent = travel_agent(model=model, tools=desk, max_iterations=12)
        await agent.run(an.travel.ARTICLE_REQUESTS["000"], session=session)
    elif mode == "error_loop":  # it loops only on a result with an error text in it
        agent = travel_agent(model=TravelModel(misbehave=mode), faults={"search_flights": "noisy"})
        await agent.run(an.travel.ARTICLE_REQUESTS["000"], session=session)
    else:
        agent = travel_agent(model=TravelModel(misbehave=mode), max_iterations=4)
        await agent.run(an.travel.ARTICLE_REQUESTS["000"], session=session)
    rules = [r for m in replies(session) for r in check_reasoning(m, "zh")]
    if mode != "ghost_call":  # the ghost is in what it read, not in a line it writes
        assert f"misbehave_{mode}" in rules, rules


async def test_the_facts_behind_the_default_answer():
    result = await travel_agent().run(an.travel.ARTICLE_REQUESTS["000"])
    first, last = replies(result.session)[0], replies(result.session)[-1]
    assert (
        first.reasoning_content.splitlines()[0]
        == "[today] 今天是 2025-01-06（周一），周五 → 2025-01-10（周五）"
    )
    assert "[date_format] search_flights 接受相对日期 → 原样发送「周五」" in first.reasoning_content
    assert (
        "[hotel_choice] 价格较低的一半里评分最高 → 全季酒店（520 元，评分 4.6）"
        in last.reasoning_content
    )
    assert "[budget] 880 + 520 = 1400，预算 3000 → 在预算内" in last.reasoning_content
    iso = await travel_agent(schemas="article").run("下周三上海飞北京")
    why = replies(iso.session)[0].reasoning_content
    assert "[today] 今天是 2025-01-06（周一），下周三 → 2025-01-15（周三）" in why
    assert "[date_format] search_flights 的日期参数要 YYYY-MM-DD → 发送 2025-01-15" in why
    english = await travel_agent(language="en").run(an.travel.ARTICLE_REQUESTS["en"])
    assert replies(english.session)[0].reasoning_content.startswith(
        "[today] today is 2025-01-06 (Mon), this Friday → 2025-01-10 (Fri)")  # fmt: skip


async def test_failures_questions_and_not_understood_lines_are_explained():
    tools = TravelTools(faults={"search_weather": "timeout"}, timeout=0.05)
    failed = await travel_agent(tools=tools).run(an.travel.ARTICLE_REQUESTS["000"])
    text = "\n".join(m.reasoning_content or "" for m in replies(failed.session))
    assert "[on_failure] search_weather 失败（timeout）→ 重试一次" in text
    asked = await travel_agent().run("帮我订个北京的酒店")
    assert (
        replies(asked.session)[0].reasoning_content
        == "[missing] 缺少哪天入住 → 先问用户，不调用工具"
    )
    odd = await travel_agent(instructions=an.travel.INSTRUCTIONS + "\n对 VIP 用户要热情一些。").run(
        "周五北京天气"
    )
    assert "[not_understood] 有 1 行指令没读懂（见 understood()）：对 VIP 用户要热情一些。" in (
        replies(odd.session)[0].reasoning_content)  # fmt: skip


async def test_explain_false_writes_no_reasoning_and_the_same_answers():
    quiet = await travel_agent(model=TravelModel(explain=False)).run(
        an.travel.ARTICLE_REQUESTS["000"]
    )
    loud = await travel_agent().run(an.travel.ARTICLE_REQUESTS["000"])
    assert all(m.reasoning_content is None for m in replies(quiet.session))
    assert quiet.output == loud.output
    assert [d.rules for d in quiet.trace.of_type(an.events.Decided)] == [()] * 5
    assert "(rules: today, final_answer" in loud.trace.of_type(an.events.Decided)[-1].summary()
