"""The travel task set, and evaluate over TravelModel variants: ordered as the rules predict."""

from __future__ import annotations

import inspect
import re

import pytest

import agentnb as an
from agentnb.travel import INSTRUCTIONS, TravelModel

TOOLS_FIRST = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\n"


def test_the_task_set_has_thirty_tasks_in_both_languages_and_every_topic():
    tasks = an.travel.task_set()
    assert len(tasks) >= 30 and tasks.name == "travel"
    zh, en = an.travel.task_set(language="zh"), an.travel.task_set(language="en")
    assert len(zh) + len(en) == len(tasks) and len(en) >= 8
    for t in zh:
        assert re.search(r"[\u4e00-\u9fff]", t.input), t.name
    for topic in ("article", "dates", "over_budget", "ambiguous", "unknown_city", "follow_up"):
        assert len(an.travel.task_set(tags=[topic])) >= 2, topic
    assert an.travel.task_set(tags=["follow_up"])[0].history  # earlier turns run first
    assert all(t.checks for t in tasks)
    assert tasks["article-000"].input == an.travel.ARTICLE_REQUESTS["000"]


@pytest.fixture(scope="module")
def variants():
    base = an.travel.travel_agent()
    assert TOOLS_FIRST in INSTRUCTIONS
    return {
        "article": base,
        # without "必须使用工具", the fabricate-prone stand-in answers from "memory"
        "no_tools_rule": base.copy(
            instructions=INSTRUCTIONS.replace(TOOLS_FIRST, ""), model=TravelModel("fabricate")
        ),
        # the same model WITH the rule: the instruction is what keeps it honest
        "fabricate_with_rule": base.copy(model=TravelModel("fabricate")),
        "loop": base.copy(model=TravelModel("loop")),
    }


async def test_variants_are_ordered_as_their_rules_predict(variants):
    ev = await an.evaluate(variants, an.travel.task_set())
    s = ev.summary
    rate = s["success_rate"]
    assert rate["article"] == 1.0 and rate["fabricate_with_rule"] == 1.0
    assert rate["article"] > rate["loop"] > rate["no_tools_rule"]
    runs = ev.runs
    fabricated = runs[runs.variant == "no_tools_rule"]
    answered = fabricated[fabricated.tool_calls == 0]
    grounded_fail = answered.failed_checks.str.contains("grounded")
    assert grounded_fail.sum() >= 25  # it fabricates, and grounded() catches it
    assert "CA1234" in ev.record("no_tools_rule", "article-000").output
    loops = runs[(runs.variant == "loop")]
    assert (loops.stop_reason == "repeated_action").sum() >= 10
    looped = ev.record("loop", "article-000")
    assert looped.stop_reason == "repeated_action" and looped.outcome == "fail"
    cmp = ev.compare("article", "no_tools_rule")
    assert cmp.losses >= 30 and cmp.wins == 0 and cmp.mcnemar_p < 1e-6
    assert cmp.ci_high < 0
    assert ev.compare("article", "fabricate_with_rule").mcnemar_p == 1.0


TEMPERATURE = "temperature" in inspect.signature(TravelModel).parameters


@pytest.mark.skipif(
    not TEMPERATURE,
    reason="TravelModel(temperature=..., seed=...) and "
    ".with_seed() come with the stand-in model's branch (`standin`); this test "
    "runs as soon as TravelModel accepts temperature",
)
async def test_with_temperature_repeats_are_flaky_and_reproduce_exactly():
    base = an.travel.travel_agent()
    hot = base.copy(model=TravelModel(temperature=1.0))
    tasks = an.TaskSet(
        [*an.travel.task_set(tags=["article"]), *an.travel.task_set(tags=["budget"])]
    )
    first = await an.evaluate({"cold": base, "hot": hot}, tasks, repeats=5, seed=7)
    flaky = first.flakiness
    hot_rows = flaky[flaky.variant == "hot"]
    assert (hot_rows.kind == "some").sum() >= 1  # some task passed some repeats, not all
    assert hot_rows.distinct_answers.max() >= 2
    assert set(flaky[flaky.variant == "cold"].distinct_answers) == {1}
    s = first.summary
    assert s.loc["hot", "pass^5"] < s.loc["hot", "pass@5"]
    assert s.loc["cold", "pass^5"] == s.loc["cold", "pass@5"]
    again = await an.evaluate({"cold": base, "hot": hot}, tasks, repeats=5, seed=7)
    cols = ["variant", "task", "repeat", "outcome", "failed_checks", "seed", "output"]
    assert again.runs[cols].equals(first.runs[cols])
    other = await an.evaluate({"hot": hot}, tasks, repeats=5, seed=8)
    assert not other.runs[cols].equals(
        first.runs[first.runs.variant == "hot"][cols].reset_index(drop=True)
    )
