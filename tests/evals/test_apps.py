"""Any app as a variant: an openai-SDK tool loop and an openai-agents agent (Chat Completions)
evaluated beside an agentnb agent on the same tasks and checks, through the recording proxy."""

from __future__ import annotations

import inspect
import json
import sys
import textwrap

import pytest

import agentnb as an
from agentnb import checks

pytest.importorskip("starlette")
openai = pytest.importorskip("openai")

TASKS = an.TaskSet(
    [
        an.Task("weather", "周五北京天气怎么样？",
                checks=[checks.calls("search_weather", city="北京"), checks.grounded(),
                        checks.stops_with("final_answer")]),
        an.Task("hotels", "帮我找一下周五北京的酒店，预算500以内。",
                checks=[checks.calls("search_hotels"), checks.grounded()]),
        an.Task("hello", "你好", checks=[checks.no_call(), checks.stops_with("final_answer")]),
    ]
)  # fmt: skip

EXECUTED: list[str] = []


def travel_tools():
    """The travel domain's functions and schemas (the app's own tools: it calls them itself;
    agentnb's tool objects only turn the model's JSON into the functions' typed arguments)."""
    tools = an.travel.travel_agent(tools=an.travel.TravelTools()).tools
    return tools, tools.schemas()


async def sdk_loop(text: str, ctx: an.evals.AppContext) -> str:
    """A plain openai-SDK tool loop, its own tools: no agentnb inside."""
    desk, schemas = travel_tools()
    messages = [{"role": "system", "content": an.travel.INSTRUCTIONS},
                {"role": "user", "content": text}]  # fmt: skip
    async with openai.AsyncOpenAI(
        base_url=ctx.base_url, api_key=ctx.api_key, default_headers=ctx.headers
    ) as client:
        for _ in range(8):
            reply = await client.chat.completions.create(
                model="travel", messages=messages, tools=schemas
            )
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                ctx.state = desk
                return message.content or ""
            for call in message.tool_calls:
                EXECUTED.append(call.function.name)
                tool = desk[call.function.name]
                result = tool.fn(**tool.validate(json.loads(call.function.arguments)))
                if inspect.isawaitable(result):
                    result = await result
                content = json.dumps(result, ensure_ascii=False)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    raise RuntimeError("too many turns")


async def agents_sdk(text: str, ctx: an.evals.AppContext) -> str:
    """An openai-agents agent on Chat Completions (OpenAIChatCompletionsModel)."""
    agents = pytest.importorskip("agents")
    agents.set_tracing_disabled(True)
    desk = an.travel.TravelTools()

    @agents.function_tool
    async def search_weather(city: str, date: str) -> str:
        """Weather forecast for a city on a date.

        Args:
            city: the city, e.g. 北京
            date: YYYY-MM-DD, or 周五 / tomorrow
        """
        EXECUTED.append("search_weather")
        return json.dumps(await desk.search_weather(city, date), ensure_ascii=False)

    @agents.function_tool
    async def search_hotels(city: str, check_in_date: str, nights: int = 1) -> str:
        """Hotels in a city with their prices per night.

        Args:
            city: the city
            check_in_date: YYYY-MM-DD, or 周五
            nights: how many nights
        """
        EXECUTED.append("search_hotels")
        found = await desk.search_hotels(city, check_in_date, nights)
        return json.dumps(found, ensure_ascii=False)

    async with openai.AsyncOpenAI(
        base_url=ctx.base_url, api_key=ctx.api_key, default_headers=ctx.headers
    ) as client:
        agent = agents.Agent(
            name="travel",
            instructions=an.travel.INSTRUCTIONS,
            tools=[search_weather, search_hotels],
            model=agents.OpenAIChatCompletionsModel(model="travel", openai_client=client),
        )
        result = await agents.Runner.run(agent, text)
    return str(result.final_output)


async def test_an_sdk_loop_and_an_agents_sdk_agent_are_variants_like_any_agent():
    EXECUTED.clear()
    agent = an.travel.travel_agent()
    ev = await an.evaluate(
        {
            "agentnb": agent,
            "openai-sdk": an.evals.App(sdk_loop, upstream=an.travel.TravelModel()),
            "openai-agents": an.evals.App(agents_sdk, upstream=an.travel.TravelModel()),
        },
        TASKS,
        repeats=2,
        concurrency=4,
    )
    runs = ev.runs
    assert set(runs.outcome[runs.variant == "agentnb"]) == {"pass"}, runs
    for app in ("openai-sdk", "openai-agents"):
        mine = runs[runs.variant == app]
        assert set(mine.outcome) == {"pass"}, mine[["task", "outcome", "failed_checks", "error"]]
        # the run was rebuilt from the proxied calls: its tool calls and final answer
        weather = ev.record(app, "weather", 1)
        assert weather.tool_calls >= 1 and weather.model_calls >= 2
        assert "北京" in (weather.output or "")
        session = ev.session(app, "weather", 1)
        assert session.requests and session.messages[-1].role == "assistant"
    assert EXECUTED.count("search_weather") >= 4  # the apps ran their own tools
    # the same statistics and trajectory diff as for agentnb variants
    c = ev.compare("agentnb", "openai-sdk")
    assert c.pairs == 6 and c.losses == 0
    from agentnb.evals.trajectory import align

    t = align([ev.session(v, "weather") for v in ev.variants], ev.variants,
              [ev.record(v, "weather") for v in ev.variants])  # fmt: skip
    assert t.rows and t.metrics[1]["stop_reason"] == "final_answer"


async def test_a_command_is_a_variant_one_run_at_a_time(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, sys, openai
            client = openai.OpenAI()   # OPENAI_BASE_URL and OPENAI_API_KEY from the runner
            text = sys.stdin.read()
            reply = client.chat.completions.create(
                model="travel", messages=[{"role": "user", "content": text}])
            print(reply.choices[0].message.content)
            """
        ),
        encoding="utf-8",
    )
    app = an.evals.App(command=[sys.executable, str(script)], upstream=an.travel.TravelModel())
    tasks = an.TaskSet([an.Task("hello", "你好", checks=[checks.no_call()])])
    ev = await an.evaluate({"cli": app}, tasks, repeats=2)
    assert [r.outcome for r in ev.records] == ["pass", "pass"], ev.runs
    assert ev.session("cli", "hello", 1).messages[0].content == "你好"


async def test_an_app_that_sends_nothing_is_an_error_run_saying_so():
    async def silent(text, ctx):
        return "I answered without a model"

    ev = await an.evaluate({"x": an.evals.App(silent, upstream=an.travel.TravelModel())}, TASKS)
    assert {r.outcome for r in ev.records} == {"error"}
    assert "the proxy saw no call of this run" in ev.records[0].error
    with pytest.raises(an.ConfigurationError, match="needs upstream"):
        an.evals.App(silent)


ANSWER_AND_LEAVE = """
import os, subprocess, sys, openai
client = openai.OpenAI()
text = sys.stdin.read()
reply = client.chat.completions.create(model="travel", messages=[{"role": "user", "content": text}])
print(reply.choices[0].message.content, flush=True)
{tail}
"""


def _state(pid: int) -> str:
    """A process's state letter ('' when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return ""


async def test_a_command_that_leaves_a_child_on_its_output_ends_when_it_exits(tmp_path):
    """A command that answered and exited, leaving a background child holding its stdout:
    the run waited for the pipe, 'timed out' although the app had answered, and the child
    was left running (M5). The run ends when the command exits; its group is ended."""
    pid_file = tmp_path / "child.pid"
    child = (
        f"child = subprocess.Popen(['sleep', '60'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))"
    )
    script = tmp_path / "app.py"
    script.write_text(ANSWER_AND_LEAVE.replace("{tail}", child), encoding="utf-8")
    app = an.evals.App(command=[sys.executable, str(script)], upstream=an.travel.TravelModel())
    tasks = an.TaskSet([an.Task("hello", "你好", checks=[checks.no_call()])])
    ev = await an.evaluate({"cli": app}, tasks, timeout=30)
    (record,) = ev.records
    assert record.outcome == "pass", record.error
    assert record.latency < 15 and (record.output or "")
    assert _state(int(pid_file.read_text())) in ("", "Z")  # ended with its group


async def test_a_command_that_prints_without_end_costs_a_bounded_amount_of_memory(tmp_path):
    """A command printing without end grew the evaluating process by 384-985 MB in 3 s
    before its timeout (H7): its output is read with a bound (the last OUTPUT_LIMIT bytes)."""
    import tracemalloc

    from agentnb.evals.commands import OUTPUT_LIMIT

    loud = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)"
    script = tmp_path / "loud.py"
    script.write_text(ANSWER_AND_LEAVE.replace("{tail}", loud), encoding="utf-8")
    app = an.evals.App(command=[sys.executable, str(script)], upstream=an.travel.TravelModel())
    tasks = an.TaskSet([an.Task("hello", "你好", checks=[checks.no_call()])])
    tracemalloc.start()
    try:
        ev = await an.evaluate({"cli": app}, tasks, timeout=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ev.records[0].error == "timed out after 3 s"
    assert peak < 8 * OUTPUT_LIMIT + 16_000_000, f"{peak / 1e6:.0f} MB"


async def test_an_app_that_compacts_its_context_is_judged_where_it_ended():
    """An app that compacted its context (a summary in place of its history) was judged on
    the longest conversation, the one it abandoned (M3): the run's last call decides."""

    def upstream(request):
        last = request.messages[-1]["content"]
        return "FINAL: 北京周五晴" if "answer now" in last else f"still working on {last}"

    async def compacting(text, ctx):
        async with openai.AsyncOpenAI(
            base_url=ctx.base_url, api_key=ctx.api_key, default_headers=ctx.headers
        ) as client:
            messages = [{"role": "user", "content": text}]
            for step in range(3):  # a long first conversation
                reply = await client.chat.completions.create(model="m", messages=messages)
                messages += [reply.choices[0].message.model_dump(exclude_none=True),
                             {"role": "user", "content": f"step {step}"}]  # fmt: skip
            summary = [{"role": "system", "content": "summary: three steps done"},
                       {"role": "user", "content": "answer now"}]  # fmt: skip
            await client.chat.completions.create(model="m", messages=summary)

    model = an.models.FunctionModel(upstream, name="upstream")
    tasks = an.TaskSet([an.Task("t", "北京周五天气", checks=[checks.answer_contains("FINAL")])])
    ev = await an.evaluate({"app": an.evals.App(compacting, upstream=model)}, tasks)
    (record,) = ev.records
    assert record.outcome == "pass", (record.output, record.failed_checks)
    assert ev.session("app", "t").messages[-1].content == "FINAL: 北京周五晴"


def test_an_app_spends_prompt_and_completion_tokens_priced_and_serves_two_event_loops():
    """App variants: prompt_tokens/completion_tokens 0 and cost NaN even with a price set;
    the same App in a second asyncio.run(an.evaluate(...)) raised 'Lock ... bound to a
    different event loop' (issue 36)."""
    import asyncio

    app = an.evals.App(sdk_loop, upstream=an.travel.TravelModel())
    tasks = TASKS.select(["weather"])
    an.evals.prices.set("travel-standin-priced", input=1.0, output=2.0)
    try:
        app.upstream.name = "travel-standin-priced"
        runs = [asyncio.run(an.evaluate({"app": app}, tasks)) for _ in range(2)]
        for ev in runs:
            (record,) = ev.records
            assert record.outcome == "pass", record.error
            assert record.model == "travel-standin-priced" and record.unmetered == 0
            assert record.prompt_tokens > 0 and record.completion_tokens > 0
            assert record.cost() == pytest.approx(
                (record.prompt_tokens * 1.0 + record.completion_tokens * 2.0) / 1e6
            )
            assert ev.summary.loc["app", "spend"] > 0
    finally:
        del an.evals.prices["travel-standin-priced"]
