"""Each stop reason, as a whole transcript and a RunStopped event with a readable detail."""

from __future__ import annotations

import asyncio

import pytest

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel
from tests.helpers import assert_valid_conversation, call, calls

WEATHER = call("w", "search_weather", city="北京", date="2025-01-10")


def looping_model() -> FunctionModel:
    """Asks for the same weather forever, with a fresh id each time."""

    def reply(request):
        n = sum(1 for m in request.messages if m["role"] == "assistant")
        return calls(call(f"w{n}", "search_weather", city="北京", date="2025-01-10"))

    return FunctionModel(reply)


def stopped(result: an.RunResult) -> an.events.RunStopped:
    last = result.events[-1]
    assert isinstance(last, an.events.RunStopped)
    assert last.reason == result.stop_reason and last.detail == result.stop_detail
    assert result.stop_reason in an.STOP_REASONS
    return last


async def test_final_answer(tools):
    result = await an.Agent("", tools, model=ScriptedModel(["我是差旅助手。"])).run("你是什么？")
    assert result.stop_reason == "final_answer"
    assert result.output == "我是差旅助手。"
    assert stopped(result).detail == "the model answered without calling a tool"
    assert result.session.to_openai() == [
        {"role": "user", "content": "你是什么？"},
        {"role": "assistant", "content": "我是差旅助手。"},
    ]


async def test_repeated_action_stops_after_three_identical_calls(tools):
    agent = an.Agent("", tools, model=looping_model(), max_iterations=10)
    result = await agent.run("北京天气")
    assert result.stop_reason == "repeated_action"
    assert result.iterations == 3
    assert stopped(result).detail == (
        "search_weather was called 3 times in a row with the same arguments "
        '{"city": "北京", "date": "2025-01-10"}'
    )
    msgs = result.session.to_openai()
    assert_valid_conversation(msgs)
    assert [m["role"] for m in msgs] == ["user"] + ["assistant", "tool"] * 3


async def test_repeat_limit_zero_disables_the_check(tools):
    result = await an.Agent("", tools, model=looping_model(), repeat_limit=0, max_iterations=4).run(
        "x"
    )
    assert result.stop_reason == "max_iterations"


async def test_max_iterations(tools):
    def reply(request):  # a different city every time: never "repeated"
        n = sum(1 for m in request.messages if m["role"] == "assistant")
        return calls(call(f"w{n}", "search_weather", city=f"城市{n}", date="2025-01-10"))

    result = await an.Agent("", tools, model=FunctionModel(reply), max_iterations=4).run("x")
    assert result.stop_reason == "max_iterations"
    assert result.iterations == 4
    assert stopped(result).detail == "reached max_iterations=4 model calls without a final answer"
    assert result.output is None
    assert_valid_conversation(result.session.to_openai())


async def test_max_iterations_can_ask_for_a_final_answer_without_tools(tools):
    requests = []

    def reply(request):
        requests.append(request)
        if not request.tools:
            return "根据已查到的信息：北京周五晴。"
        n = len(requests)
        return calls(call(f"w{n}", "search_weather", city=f"城市{n}", date="2025-01-10"))

    agent = an.Agent(
        "", tools, model=FunctionModel(reply), max_iterations=2, final_answer_on_stop=True
    )
    result = await agent.run("x")
    assert result.stop_reason == "max_iterations"
    assert result.output == "根据已查到的信息：北京周五晴。"
    assert result.iterations == 3 and requests[-1].tools == [] and requests[0].tools
    assert "final answer with tools disabled" in result.stop_detail


async def test_final_answer_call_that_still_calls_tools_gets_not_executed_results(tools):
    def reply(request):
        n = sum(1 for m in request.messages if m["role"] == "assistant")
        return calls(call(f"w{n}", "search_weather", city=f"城市{n}", date="2025-01-10"))

    agent = an.Agent(
        "", tools, model=FunctionModel(reply), max_iterations=1, final_answer_on_stop=True
    )
    result = await agent.run("x")
    assert result.stop_reason == "max_iterations"
    msgs = result.session.to_openai()
    assert_valid_conversation(msgs)
    assert "not executed" in msgs[-1]["content"]


async def test_token_budget(tools):
    script = [calls(call("w", "search_weather", city="北京", date="2025-01-10")), "never"]
    model = ScriptedModel(
        [
            an.models.ModelResponse(
                an.models.base.coerce_response(script[0]).message,
                an.models.Usage(900, 200, 1100),
                "tool_calls",
            ),
            script[1],
        ]
    )
    result = await an.Agent("", tools, model=model, token_budget=1000).run("x")
    assert result.stop_reason == "token_budget"
    assert stopped(result).detail == "the run used 1100 tokens; token_budget=1000"
    assert model.remaining == 1


async def test_custom_predicate(tools):
    def weather_is_enough(run: an.Run) -> str | None:
        if any(
            e.name == "search_weather" for e in run.events if isinstance(e, an.events.ToolFinished)
        ):
            return "weather is all this lesson needs"
        return None

    model = ScriptedModel([calls(WEATHER), "never"])
    agent = an.Agent("", tools, model=model, stop_when=[weather_is_enough])
    result = await agent.run("x")
    assert result.stop_reason == "custom"
    assert result.stop_detail == "weather is all this lesson needs"

    agent.stop_when = [lambda run: True]
    result = await agent.__class__(
        "", tools, model=ScriptedModel([calls(WEATHER)]), stop_when=[lambda run: True]
    ).run("x")
    assert result.stop_reason == "custom" and "returned True" in result.stop_detail


async def test_model_error_stops_with_error_and_raises_a_typed_exception(tools):
    model = ScriptedModel([calls(WEATHER), ConnectionError("HTTP 500 from upstream")])
    session = an.Session()
    with pytest.raises(an.ModelCallFailed, match="ConnectionError: HTTP 500 from upstream") as info:
        await an.Agent("", tools, model=model).run("x", session=session)
    assert isinstance(info.value.__cause__, ConnectionError)
    result = info.value.result
    assert result.stop_reason == "error"
    assert stopped(result).detail.startswith("ModelCallFailed")
    assert session.is_valid and len(session) == 3
    assert session.runs[-1].stop_reason == "error"
    assert session.lock.holder is None


async def test_no_model_is_a_configuration_error(tools):
    with pytest.raises(an.ConfigurationError, match="has no model"):
        await an.Agent("", tools).run("x")


async def test_cancel_during_a_slow_tool_leaves_a_valid_session():
    started = asyncio.Event()

    @an.tool
    async def slow(city: str) -> str:
        """Slow."""
        started.set()
        await asyncio.sleep(30)
        return "never"

    @an.tool
    async def quick(city: str) -> str:
        """Quick."""
        return f"{city} ok"

    model = ScriptedModel(
        [calls(call("q", "quick", city="北京"), call("s", "slow", city="北京")), "never"]
    )
    session = an.Session()
    task = asyncio.create_task(an.Agent("", [quick, slow], model=model).run("x", session=session))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    msgs = session.to_openai()
    assert_valid_conversation(msgs)
    assert msgs[2] == {"role": "tool", "tool_call_id": "q", "name": "quick", "content": "北京 ok"}
    assert msgs[3]["tool_call_id"] == "s" and '"ok": false' in msgs[3]["content"]
    assert "cancelled" in msgs[3]["content"]
    assert session.runs[-1].stop_reason == "cancelled"
    assert session.lock.holder is None
    last = session.runs[-1]
    assert last.detail == "the task was cancelled"
    # The session is immediately usable again.
    again = await an.Agent("", [quick], model=ScriptedModel(["好的"])).run("继续", session=session)
    assert again.stop_reason == "final_answer"


async def test_run_cancel_returns_a_cancelled_result():
    started = asyncio.Event()

    @an.tool
    async def slow(city: str) -> str:
        """Slow."""
        started.set()
        await asyncio.sleep(30)
        return "never"

    agent = an.Agent("", [slow], model=ScriptedModel([calls(call("s", "slow", city="北京"))]))
    run = agent.start("x")
    task = asyncio.create_task(run.finish())
    await started.wait()
    run.cancel()
    result = await task
    assert result.stop_reason == "cancelled"
    assert stopped(result).detail == "run.cancel() was called"
    assert stopped(result).stopped_in == "execute_tools" and stopped(result).stage == "persist"
    assert_valid_conversation(result.session.to_openai())
    kinds = [e.kind for e in result.trace.of_type(an.events.ToolFinished)]
    assert kinds == ["cancelled"]


def test_a_function_is_not_a_model_and_the_error_says_what_to_do(tools):
    with pytest.raises(
        an.ConfigurationError, match=r"wrap a function with an\.models\.FunctionModel"
    ):
        an.Agent("", tools, model=lambda request: "hi")
    with pytest.raises(an.ConfigurationError, match="str is not a model"):
        an.Agent("", tools, model="gpt-4o")


async def test_a_cancelled_call_that_started_is_never_reported_as_not_run():
    """Invariant 8: the call in flight when the run was cancelled may have had effects; the
    serial call after it never started."""
    import asyncio
    import json

    started = asyncio.Event()

    @an.tool
    async def book(city: str) -> dict:
        """Books a room."""
        started.set()
        await asyncio.sleep(30)
        return {"booked": city}

    reply = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {"name": "book", "arguments": '{"city": "北京"}'},
            },
            {
                "id": "b",
                "type": "function",
                "function": {"name": "book", "arguments": '{"city": "上海"}'},
            },
        ],
    }
    agent = an.Agent("x", [book], model=ScriptedModel([reply]), parallel_tool_calls=False)
    session = an.Session()
    run = agent.start("订酒店", session=session)
    task = asyncio.ensure_future(run.finish())
    await started.wait()
    run.cancel()
    result = await task
    assert result.stop_reason == "cancelled" and session.is_valid
    hints = {
        m.tool_call_id: json.loads(m.content)["hint"] for m in session.messages if m.role == "tool"
    }
    assert "interrupted while it ran" in hints["a"] and "may or may not" in hints["a"]
    assert "did not run" in hints["b"]


async def test_a_timeout_around_a_run_whose_tool_just_finished_is_a_timeout_error():
    """asyncio.timeout(...) around agent.run: when the deadline cancels the run in the turn of
    the loop its thread tool finished in, the tool's result is kept and the caller gets a
    TimeoutError. The runtime re-raised its internal signal (a CancelledError subclass), which
    3.11's asyncio.timeout does not convert: a CancelledError escaped and ended the caller (an
    evaluation's whole sweep, under load)."""
    import time

    @an.tool
    def slow_weather(city: str) -> dict[str, str]:
        """Weather, slowly."""
        time.sleep(0.1)
        return {"city": city, "sky": "晴"}

    reply = {"id": "c1", "type": "function", "function": {"name": "slow_weather"}}
    reply["function"]["arguments"] = '{"city": "北京"}'
    model = an.models.ScriptedModel([{"role": "assistant", "tool_calls": [reply]}, "晴"])
    agent = an.Agent("", [slow_weather], model=model)
    session = an.Session()
    loop = asyncio.get_running_loop()
    # the loop is busy (a loaded machine) from 10 ms to 210 ms: the thread finishes at 100 ms
    # and the deadline (50 ms) is due when the loop turns again, in the same turn
    loop.call_later(0.01, time.sleep, 0.2)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await agent.run("北京天气", session=session)
    record = session.runs[-1]
    assert record.stop_reason == "cancelled"
    assert session.messages[-1].role == "tool" and "晴" in session.messages[-1].text  # kept
