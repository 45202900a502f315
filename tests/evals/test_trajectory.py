"""Trajectory diff: runs aligned step by step, reply batches as units, the first divergence."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.evals.trajectory import align
from agentnb.models import ScriptedModel
from agentnb.models.differ import changed_paths, json_changes, line_diff, messages_diff
from agentnb.travel import INSTRUCTIONS, TravelModel

REQUEST = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"
TOOLS_FIRST = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\n"


def call(id, name, **args):
    import json

    return {"id": id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


@an.tool
def weather(city: str) -> dict:
    """Weather of a city."""
    return {"city": city, "condition": "晴", "high": 5}


async def scripted(*replies):
    session = an.Session()
    agent = an.Agent("x", [weather], model=ScriptedModel(list(replies)))
    await agent.run("go", session=session)
    return session


async def test_same_runs_never_part_and_every_step_is_same():
    a = await an.travel.travel_agent().run(REQUEST, session=an.Session())
    b = await an.travel.travel_agent().run(REQUEST, session=an.Session())
    t = align([a.session, b.session], ["a", "b"])
    assert t.first_divergence is None and len(t.rows) == 4
    assert {r.status for r in t.rows} == {"same"}
    assert [c.call_number for c in (r.cells[0] for r in t.rows)] == [1, 2, 3, 4]


async def test_a_skipped_step_is_partial_and_marks_the_first_divergence():
    both = {"role": "assistant", "content": None, "tool_calls": [call("1", "weather", city="北京")]}
    extra = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("2", "weather", city="上海")],
    }
    a = await scripted(both, "done")
    b = await scripted(both, extra, "done")
    t = align([a, b], ["short", "long"])
    assert [r.status for r in t.rows] == ["same", "partial"]
    assert t.rows[1].cells[0] is None and t.rows[1].cells[1].call_number == 2
    assert t.first_divergence == 1
    assert t.metrics[0]["steps"] == 1 and t.metrics[1]["steps"] == 2


async def test_parallel_calls_stay_one_unit_and_other_arguments_are_changed():
    two = [call("1", "weather", city="北京"), call("2", "weather", city="上海")]
    a = await scripted({"role": "assistant", "content": None, "tool_calls": two}, "done")
    other = [call("1", "weather", city="北京"), call("2", "weather", city="广州")]
    b = await scripted({"role": "assistant", "content": None, "tool_calls": other}, "done")
    t = align([a, b])
    assert len(t.rows) == 1 and t.rows[0].status == "changed" and len(t.rows[0].cells[0].calls) == 2
    assert t.first_divergence == 0
    diffs = t.result_diffs(0, 0, 1)
    assert diffs[1]["changes"] == [{"path": "city", "old": "上海", "new": "广州"}]


async def test_three_runs_align_against_the_first():
    both = {"role": "assistant", "content": None, "tool_calls": [call("1", "weather", city="北京")]}
    extra = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("2", "weather", city="上海")],
    }
    runs = [await scripted(both, "done"), await scripted(extra, both, "done"), await scripted("no")]
    t = align(runs, ["a", "b", "c"])
    assert [r.status for r in t.rows] == ["partial", "partial"]
    assert t.rows[0].cells == (None, t.rows[0].cells[1], None)
    assert t.rows[1].cells[0] is not None and t.rows[1].cells[2] is None


async def test_the_request_diff_shows_what_the_fabricating_variant_never_sent():
    base = an.travel.travel_agent()
    ruled = await base.run(REQUEST, session=an.Session())
    vague = base.copy(
        instructions=INSTRUCTIONS.replace(TOOLS_FIRST, ""), model=TravelModel("fabricate")
    )
    loose = await vague.run(REQUEST, session=an.Session())
    t = align([ruled.session, loose.session], ["article", "no_tools_rule"])
    assert t.first_divergence == 0 and t.metrics[1]["steps"] == 0 < t.metrics[0]["steps"]
    assert t.metrics[0]["output"] != t.metrics[1]["output"]
    # At the first step the article variant was sent the tools-first rule; the other was not.
    # run 1 took no step there: its request is the call where it answered instead (call 1)
    assert t.call_at(0, 1) == 1 and t.call_at(0, 0) == 1
    rows = t.request_diff(0, 0, 1)
    edited = [r for r in rows if r["op"] == "edited"]
    assert edited and edited[0]["w"]["role"] == "system"
    assert TOOLS_FIRST.strip() in edited[0]["old"]["content"]
    assert TOOLS_FIRST.strip() not in edited[0]["w"]["content"]
    loop = await base.copy(model=TravelModel(misbehave="loop")).run(REQUEST, session=an.Session())
    t3 = align([ruled.session, loop.session], ["article", "loop"])
    assert t3.metrics[1]["stop_reason"] == "repeated_action"
    assert any(r.status == "partial" for r in t3.rows)


def test_messages_and_json_diffs():
    a = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "1", "content": '{"price": 650, "ok": true}'},
    ]
    b = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "1", "content": '{"price": 1050, "ok": true}'},
        {"role": "user", "content": "more"},
    ]
    rows = messages_diff(a, b)
    assert [r["op"] for r in rows] == ["kept", "edited", "added"]
    assert rows[1]["changes"] == [{"path": "price", "old": 650, "new": 1050}]
    assert json_changes({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}], "c": 1}) == [
        {"path": "a[1].b", "old": 2, "new": 3},
        {"path": "c", "new": 1},
    ]
    assert json_changes("same", "same") == []
    assert json_changes([1, 2], [1]) == [{"path": "[1]", "old": 2}]
    # one rule for the session's edit records and the diffs: JSON inside strings descended
    assert changed_paths(
        {"content": '{"p": 1, "q": [1]}'}, {"content": '{"p": 2, "q": [1, 3]}'}
    ) == [
        "content.p",
        "content.q[1]",
    ]


def test_a_prompt_diff_highlights_the_changed_lines_and_spans():
    old = "You are a travel assistant.\nAnswer in Chinese.\nBe brief."
    new = "You are a travel assistant.\nAnswer in English.\nBe brief.\nCite prices."
    rows = line_diff(old, new)
    assert [r["op"] for r in rows] == ["same", "removed", "added", "same", "added"]
    removed, added = rows[1], rows[2]
    assert [removed["text"][a:b] for a, b in removed["spans"]] == ["Chinese"]
    assert [added["text"][a:b] for a, b in added["spans"]] == ["English"]
    assert line_diff("same", "same") == []
    edited = messages_diff(
        [{"role": "system", "content": old}], [{"role": "system", "content": new}]
    )
    assert edited[0]["op"] == "edited" and edited[0]["lines"] == rows


def test_one_run_is_not_a_diff():
    with pytest.raises(ValueError, match="2 runs or more"):
        align([an.Session()])
