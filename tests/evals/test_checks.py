"""Each check on real runs (scripted replies through the real runtime and tools)."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb import checks
from agentnb.evals.checks import Evidence
from agentnb.evals.checks.base import run_check


@an.tool
def search_weather(city: str, date: str) -> dict:
    """Weather."""
    return {"city": city, "date": date, "condition": "晴", "temp_min_c": -3, "temp_max_c": 5}


@an.tool
def search_hotels(city: str, nights: int = 1) -> dict:
    """Hotels."""
    return {"hotels": [{"name": "全季酒店", "price_per_night": 520, "total": 520 * nights}]}


@an.tool
def fails(city: str) -> dict:
    """Always fails."""
    raise an.ToolError("upstream down")


def call(id: str, name: str, **args) -> dict:
    return {
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    }


def reply(*calls: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


async def evidence(*replies, state=None, **agent_options) -> Evidence:
    agent = an.Agent(
        "instructions",
        [search_weather, search_hotels, fails],
        an.models.ScriptedModel(list(replies)),
        **agent_options,
    )
    result = await agent.run("周日北京天气和酒店，预算 3000")
    return Evidence(result, state)


# One run: a batch of two calls, then one call, then the answer.
TRIP = (
    reply(
        call("c0", "search_weather", city="  北京 ", date="周日"),
        call("c1", "search_hotels", city="北京", nights=2.0),
    ),
    reply(call("c2", "search_weather", city="Beijing", date="2025-01-12")),
    "北京周日晴，-3～5°C；全季酒店 520 元/晚，两晚 1040 元，在 3000 元预算内。",
)


async def verdict(check, ev: Evidence) -> tuple[bool, str]:
    result = await run_check(check, ev)
    assert result.name == check.name
    return result.passed, result.reason


async def test_calls_normalises_case_space_punctuation_numbers_and_accepts_lists():
    ev = await evidence(*TRIP)
    assert (await verdict(checks.calls("search_weather", city="北京"), ev))[0]  # spaces ignored
    assert (await verdict(checks.calls("search_weather", city="beijing!"), ev))[0]  # case, punct.
    assert (await verdict(checks.calls("search_hotels", nights=2), ev))[0]  # 2 == 2.0
    assert (await verdict(checks.calls("search_weather", city=["上海", "北京"]), ev))[0]
    ok, why = await verdict(checks.calls("search_weather", city="上海"), ev)
    assert not ok and "no search_weather call matched" in why and "北京" in why
    ok, why = await verdict(checks.calls("book_flight"), ev)
    assert not ok and "never called" in why


async def test_sequence_reads_reply_batches_in_each_order():
    ev = await evidence(*TRIP)
    batch = ["search_weather", "search_hotels"]
    assert (await verdict(checks.sequence([batch, "search_weather"], order="exact"), ev))[0]
    ok, why = await verdict(
        checks.sequence(["search_weather", "search_hotels", "search_weather"], order="exact"), ev
    )
    assert not ok and "expected exactly" in why  # three replies were not made: two were
    assert (await verdict(checks.sequence(["search_hotels", "search_weather"]), ev))[0]
    ok, _ = await verdict(
        checks.sequence(["search_weather", "search_weather", "search_hotels"]), ev
    )
    assert not ok  # in order: the hotels call did not come after the second weather call
    assert (
        await verdict(
            checks.sequence(
                ["search_hotels", "search_weather", "search_weather"], order="any_order"
            ),
            ev,
        )
    )[0]
    ok, why = await verdict(
        checks.sequence(["search_hotels", "search_hotels"], order="any_order"), ev
    )
    assert not ok and "not called" in why  # distinct calls: there was one hotel call
    matcher = checks.calls("search_weather", date="2025-01-12")
    assert (await verdict(checks.sequence([batch, matcher], order="exact"), ev))[0]


async def test_same_batch_means_one_reply():
    ev = await evidence(*TRIP)
    assert (await verdict(checks.same_batch("search_weather", "search_hotels"), ev))[0]
    serial = await evidence(
        TRIP[0]["tool_calls"] and reply(TRIP[0]["tool_calls"][0]),
        reply(TRIP[0]["tool_calls"][1]),
        "done",
    )
    ok, why = await verdict(checks.same_batch("search_weather", "search_hotels"), serial)
    assert not ok and "[search_weather] → [search_hotels]" in why


async def test_no_call_stops_with_max_steps_and_answers():
    ev = await evidence(*TRIP)
    plain = await evidence("你好")
    assert (await verdict(checks.no_call(), plain))[0]
    assert not (await verdict(checks.no_call(), ev))[0]
    assert (await verdict(checks.no_call("fails"), ev))[0]
    assert (await verdict(checks.stops_with("final_answer"), ev))[0]
    ok, why = await verdict(checks.stops_with("max_iterations"), ev)
    assert not ok and "final_answer" in why
    assert (await verdict(checks.max_steps(2), ev))[0]
    ok, why = await verdict(checks.max_steps(1), ev)
    assert not ok and "2 steps" in why
    assert (await verdict(checks.answer_contains("全季酒店", "1040"), ev))[0]
    assert (await verdict(checks.answer_contains("880", "1040", mode="any"), ev))[0]
    ok, why = await verdict(checks.answer_contains("880", "1040"), ev)
    assert not ok and "'880'" in why
    assert (await verdict(checks.answer_matches(r"两晚 \d+ 元"), ev))[0]
    assert not (await verdict(checks.answer_matches(r"^MU\d+"), ev))[0]


async def test_no_tool_errors_names_the_failed_call():
    ev = await evidence(reply(call("c0", "fails", city="北京")), "sorry")
    ok, why = await verdict(checks.no_tool_errors(), ev)
    assert not ok and "fails: tool_error" in why
    assert (await verdict(checks.no_tool_errors(), await evidence(*TRIP)))[0]


async def test_grounded_flags_numbers_no_tool_result_holds():
    ok, _ = await verdict(checks.grounded(), await evidence(*TRIP))
    assert ok  # 1040 is the tool's total for nights=2; 3000 is the user's own budget
    one_night = await evidence(reply(call("c0", "search_hotels", city="北京")), "两晚共 1040 元")
    ok, why = await verdict(checks.grounded(), one_night)
    assert not ok and why.startswith("1040")  # 520 x 2 was never returned by a tool
    ok, why = await verdict(checks.grounded(), await evidence("CA1234 07:30 起飞，650 元"))
    assert not ok and "1234" in why and "650" in why
    ok, why = await verdict(checks.grounded(min_digits=5), await evidence("CA1234 07:30，650 元"))
    assert not ok and why.startswith("CA1234, 07:30 appear")  # 650 is below min_digits: a count


async def test_end_state_reads_the_state_setup_returned():
    desk = {"booked": ["全季酒店"]}
    ev = await evidence(*TRIP, state=desk)
    assert (await verdict(checks.end_state(lambda s: "全季酒店" in s["booked"]), ev))[0]
    ok, why = await verdict(
        checks.end_state(lambda s: "nothing booked" if not s["booked"] else ""),
        await evidence(*TRIP, state={"booked": []}),
    )
    assert not ok and why == "nothing booked"


async def test_plain_callables_bool_string_and_async():
    ev = await evidence(*TRIP)

    def short(result):
        return len(result.output) < 10 or f"answer is {len(result.output)} characters"

    async def stopped(result):
        return result.stop_reason == "final_answer"

    ok, why = await verdict(checks.as_check(short), ev)
    assert not ok and why.startswith("answer is")
    assert (await verdict(checks.as_check(stopped), ev))[0]
    ok, why = await verdict(checks.as_check(lambda r: None), ev)
    assert not ok and "returned None" in why


async def test_judge_asks_a_model_and_keeps_its_reasoning():
    seen = []

    def grader(request):
        seen.append(request.messages)
        text = request.messages[-1]["content"]
        return "The answer gives the weather and a hotel.\nPASS" if "晴" in text else "No.\nFAIL"

    model = an.models.FunctionModel(grader)
    ev = await evidence(*TRIP)
    ok, why = await verdict(checks.judge(model, "Gives the weather."), ev)
    assert ok and why.startswith("The answer gives the weather")
    assert "Gives the weather." in seen[0][0]["content"] and "北京周日晴" in seen[0][1]["content"]
    ok, why = await verdict(checks.judge(model, "x"), await evidence("不知道"))
    assert not ok and why.endswith("FAIL")
    no_verdict = checks.judge(an.models.FunctionModel(lambda r: "maybe"), "x")
    with pytest.raises(an.ModelResponseError, match="no PASS/FAIL verdict"):
        await run_check(no_verdict, ev)  # the judge failed, not the agent: an error


async def test_a_judge_without_a_model_raises_so_the_run_counts_as_an_error():
    with pytest.raises(an.ConfigurationError, match="has no model"):
        await run_check(checks.judge(None, "x"), await evidence(*TRIP))


def test_normalised_comparison_keeps_booleans_apart_from_numbers():
    from agentnb.evals.normalise import canonical, matches

    assert (
        matches(1, 1.0) and matches(" Bei-Jing! ", "bei jing") and matches("北京", ["上海", "北京"])
    )
    assert not matches(True, 1) and not matches(1.0, True) and matches(False, False)
    assert matches({"city": "北京", "n": 2}, {"n": 2.0})  # a subset of the keys
    assert (
        canonical('{"b": 1, "a": "北京"}')
        == canonical({"a": "北京", "b": 1})
        == '{"a":"北京","b":1}'
    )
    assert canonical("not json") == "not json"
