"""TravelModel(temperature=…, seed=…): the documented slips, seeded per call so a run
reproduces exactly; at temperature 0 the model is the deterministic one (issue #16)."""

from __future__ import annotations

import json
import random
import re

import pytest

import agentnb as an
from agentnb.travel import ARTICLE_REQUESTS, INSTRUCTIONS, TravelModel, travel_agent
from agentnb.travel.model.slips import SLIPS, roll

CHEAP_FIRST = (
    "\nRecommend the cheapest option first when the user says 便宜/cheap or gives a budget."
)


async def trip(model: TravelModel) -> an.RunResult:
    agent = travel_agent(model=model, instructions=INSTRUCTIONS + CHEAP_FIRST)
    return await agent.run(ARTICLE_REQUESTS["000"])


def transcript(result: an.RunResult) -> list[dict]:
    return result.session.to_openai()


def slips_of(result: an.RunResult) -> set[str]:
    text = "\n".join(m.reasoning_content or "" for m in result.session.messages
                     if m.role == "assistant")  # fmt: skip
    return set(re.findall(r"^\[(slip_\w+)\]", text, re.M))


def evidence(result: an.RunResult) -> dict[str, bool]:
    """What each slip leaves in the transcript, whatever the reasoning says."""
    made = [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls]
    cost = [args for name, args in made if name == "calculate_cost"]
    labels = " ".join(i["label"] for args in cost for i in args["items"])
    return {
        "slip_date_format": any(
            re.fullmatch(r"\d\d/\d\d/\d{4}", str(v)) for _, args in made for v in args.values()
        ),
        "slip_forget_tool": len({name for name, _ in made}) < 4,
        "slip_repeat_call": len({json.dumps(c, sort_keys=True) for c in made}) < len(made),
        "slip_misread_budget": any(args.get("budget") == 300 for args in cost),
        "slip_ignore_preference": "全季" in labels or "酒店：全季" in (result.output or ""),
    }


async def test_temperature_zero_is_the_deterministic_model():
    default = await trip(TravelModel())
    zero = await trip(TravelModel(temperature=0.0, seed=123))
    assert transcript(zero) == transcript(default) and slips_of(default) == set()
    assert roll(0, 5, transcript(default)) == frozenset()


async def test_at_temperature_one_every_slip_occurs_over_50_seeds_and_shows():
    seen: dict[str, int] = dict.fromkeys(SLIPS, 0)
    for seed in range(50):
        result = await trip(TravelModel(temperature=1.0, seed=seed))
        marks, shown = slips_of(result), evidence(result)
        for slip in marks:
            seen[slip] += 1
            assert shown[slip], (seed, slip)  # a slip it names is a slip it made
        an.testing.assert_valid_conversation(transcript(result))
    assert all(n > 0 for n in seen.values()), seen
    assert sum(seen.values()) < 50 * len(SLIPS)  # slips, not the rule


async def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    runs = [await trip(TravelModel(temperature=1.0, seed=s)) for s in (7, 7, 8)]
    random.seed(99)  # global random state plays no part
    again = await trip(TravelModel(temperature=1.0, seed=7))
    assert transcript(runs[0]) == transcript(runs[1]) == transcript(again)
    outcomes = {json.dumps(transcript(await trip(TravelModel(temperature=1.0, seed=s))),
                           ensure_ascii=False) for s in range(10)}  # fmt: skip
    assert len(outcomes) > 3


async def test_the_chance_of_a_slip_grows_with_temperature():
    async def count(t: float) -> int:
        return sum([len(slips_of(await trip(TravelModel(temperature=t, seed=s))))
                    for s in range(30)])  # fmt: skip

    low, high = await count(0.2), await count(1.5)
    assert 0 < low < high


def test_with_seed_is_a_copy_with_every_other_setting_equal():
    model = TravelModel(temperature=0.7, seed=1, explain=False, misbehave="loop", parallel=True)
    twin = model.with_seed(42)
    assert twin is not model and (model.seed, twin.seed) == (1, 42)
    for field in ("temperature", "explain", "misbehave", "parallel", "today", "data", "streaming"):
        assert getattr(twin, field) == getattr(model, field), field
    assert "seed=42" in twin.name and "seed=1" in model.name
    with pytest.raises(ValueError, match="temperature"):
        TravelModel(temperature=-1)


def test_every_slip_is_in_the_rule_table():
    table = TravelModel.rules()
    for slip, what in SLIPS.items():
        assert table[slip]["kind"] == "slip" and table[slip]["with it"] == what


async def test_a_no_op_instruction_line_flips_no_pair_at_temperature_one():
    """Slips are keyed by (seed, task, step, slip): a line that sets no knob changes no die
    (issue 25; keyed by the whole request before, 'be polite' re-rolled every slip)."""
    tasks = an.travel.task_set()

    def agent(extra: str = "") -> an.Agent:
        return travel_agent(model=TravelModel(temperature=1.0), instructions=INSTRUCTIONS + extra)

    ev = await an.evaluate({"base": agent(), "polite": agent("\n对用户要礼貌。")}, tasks,
                           repeats=5, seed=11)  # fmt: skip
    c = ev.compare("base", "polite")
    assert c.pairs == len(tasks) * 5 and c.wins == c.losses == 0
    runs = ev.runs
    assert 0 < (runs["outcome"] != "pass").sum() < len(runs)  # slips happened, not everywhere
    for task in tasks:
        for repeat in range(5):
            base, polite = ([{k: v for k, v in m.items() if k != "reasoning_content"}
                             for m in ev.session(name, task, repeat).to_openai()[1:]]
                            for name in ("base", "polite"))  # fmt: skip
            assert base == polite  # but the instructions and the reasoning ("not understood")
    again = await an.evaluate({"base": agent()}, tasks, repeats=5, seed=11)
    for task in tasks:
        for repeat in range(5):
            assert (again.session("base", task, repeat).to_openai()
                    == ev.session("base", task, repeat).to_openai())  # fmt: skip
