"""The stand-in's proposer: its lines are read by the stand-in, its diagnosis follows the
failed checks, it writes in the instructions' language and never repeats a rule in force."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

import agentnb as an
from agentnb.evals.optimise.proposer import REFLECT
from agentnb.models import ModelRequest
from agentnb.travel import INSTRUCTIONS, INSTRUCTIONS_EN, TravelModel
from agentnb.travel.model.proposer import FIXES, diagnose


@pytest.mark.parametrize("fix", FIXES, ids=lambda f: f.rule)
@pytest.mark.parametrize("language", ["zh", "en"])
def test_each_line_sets_its_knob_when_the_stand_in_reads_it(fix, language):
    read = TravelModel().understood(getattr(fix, language))
    value = read[fix.knob]
    if fix.knob == "sections":
        assert set(value) >= {"flights", "weather", "hotels", "cost"}, value
    else:
        assert value == fix.wanted, (fix.rule, value)
    assert fix.rule in TravelModel.rules()  # a row of the rule table it cites


def _failure(checks, *, calls=1, stop="final_answer"):
    return {
        "task": "t",
        "request": "周五上海到北京",
        "failed_checks": [{"check": c, "why": w} for c, w in checks],
        "stop_reason": stop,
        "tool_calls": [{"tool": "search_flights"}] * calls,
        "answer": "…",
    }


def test_the_diagnosis_follows_the_failed_checks():
    assert diagnose(_failure([("grounded()", "1400 is in no tool result")])) == {"tools_first"}
    assert diagnose(_failure([("calls('search_flights')", "never called")], calls=0)) == {
        "tools_first"
    }
    assert diagnose(_failure([("stops_with('final_answer')", "x")], stop="max_iterations")) == {
        "stop_when_enough"
    }
    lacks = "the answer lacks '超出 1300 元预算', '备选方案': '合计 1400 元'"
    assert diagnose(_failure([("answer_contains('超出 1300 元预算', '备选方案')", lacks)])) == {
        "budget_alternatives"
    }
    sold = "the answer lacks 'sold out', '2025-01-21': 'Sorry'"
    assert diagnose(_failure([("answer_contains('sold out')", sold)])) == {"error_advice"}
    dates = "the answer lacks '2025-01-11': '杭州当天晴。'"
    assert diagnose(_failure([("answer_contains('2025-01-11')", dates)])) == {"output_rules"}
    assert diagnose(_failure([("in_english", "the answer is in Chinese")])) == set()


def _ask(instructions, failures):
    proposer = TravelModel().proposer()
    tools = {t.name: t.description for t in an.travel.travel_agent().tools}
    body = {"current": {"instructions": instructions, "tools": tools}, "failures": failures}
    request = ModelRequest(
        [{"role": "system", "content": REFLECT}, {"role": "user", "content": json.dumps(body)}]
    )
    reply = asyncio.run(proposer.complete(request))
    return json.loads(reply.message.content), reply


def test_it_proposes_the_rule_that_explains_most_failures_in_the_instructions_language():
    stopped = _failure([("stops_with('final_answer')", "x")], stop="max_iterations")
    invented = _failure([("grounded()", "1400 is in no tool result")])
    zh, response = _ask("你是差旅助手。", [stopped, invented, invented])
    assert zh["instructions"] == "你是差旅助手。\n" + FIXES[0].zh  # tools_first: 2 of 3
    assert zh["rationale"].startswith("2 of 3 failed runs point to rule tools_first")
    assert zh["rationale"].endswith(f"in the instructions' language: “{FIXES[0].zh}”")
    assert response.usage.estimated and response.model.startswith("TravelProposer")
    en, _ = _ask("You are a travel assistant.", [stopped])
    assert en["instructions"].endswith(FIXES[1].en)
    assert en["rationale"].startswith("1 of 1 failed run points to rule stop_when_enough")


def test_a_rule_in_force_is_not_proposed_again_and_an_unknown_failure_is_said():
    invented = _failure([("grounded()", "1400 is in no tool result")])
    reply, _ = _ask(INSTRUCTIONS, [invented])
    assert "instructions" not in reply and "already set" in reply["rationale"]
    reply, _ = _ask(INSTRUCTIONS_EN, [_failure([("in_english", "Chinese")])])
    assert "instructions" not in reply and "match no rule" in reply["rationale"]
    bad = asyncio.run(
        TravelModel().proposer().complete(ModelRequest([{"role": "user", "content": "hi"}]))
    )
    assert "could not read the reflection request" in bad.message.content


async def test_an_english_weak_prompt_improves_too():
    agent = an.travel.travel_agent(
        model=TravelModel("fabricate"), language="en", instructions="You are a travel assistant."
    )
    opt = await an.optimize(
        agent, an.travel.task_set(), proposer=TravelModel().proposer(), budget=150, progress=False
    )
    assert opt.best.id != "c0" and opt.best.validation > opt.candidates[0].validation
    assert "You must use the tools" in opt.best.texts.instructions


_QUOTED = re.compile(r"“[^”]*”")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_a_rationale_is_in_one_language_what_it_cites_in_another_quoted():
    """Issue 36: the rationale to Chinese instructions mixed languages in one sentence (its
    Chinese words around the rule table's and the checks' English). Now its own words are
    English whatever the instructions' language; the request, the line and the table's cells
    it cites stand in quotation marks."""
    stopped = _failure([("stops_with('final_answer')", "x")], stop="max_iterations")
    invented = _failure([("grounded()", "1400 is in no tool result")])
    over = _failure([("answer_contains('备选')", "the answer lacks '备选'")])
    cases = [
        ("你是差旅助手。", [stopped, invented, invented]),
        ("你是差旅助手。", [over]),
        ("You are a travel assistant.", [stopped]),
        (INSTRUCTIONS, [invented]),  # nothing to propose: said in English too
    ]
    for instructions, failures in cases:
        reply, _ = _ask(instructions, failures)
        rationale = reply["rationale"]
        own = _QUOTED.sub("", rationale)
        assert not _CJK.search(own), rationale
        assert rationale.count("“") == rationale.count("”")
        if "instructions" in reply:  # the line it adds is quoted whole
            assert f"“{reply['instructions'].splitlines()[-1]}”" in rationale
