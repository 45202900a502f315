"""agent.as_tool: a sub-agent as a tool with its own session, found from the parent's call
(000 §5.1: split a task into subtasks); an.tools.current_call() inside tools."""

from __future__ import annotations

import asyncio

import pytest

import agentnb as an
from agentnb.events import ToolFinished
from agentnb.tools.calls import current_call
from tests.helpers import assert_valid_conversation, call, calls, content, eventually


@an.tool
def search_weather(city: str, date: str) -> dict:
    """天气."""
    return {"city": city, "date": date, "rain_probability": 0.8}


def weather_agent(replies: list[dict]) -> an.Agent:
    return an.Agent(
        "你只查天气。",
        tools=[search_weather],
        model=an.models.ScriptedModel(replies),
        name="weather",
    )


async def test_a_sub_agent_runs_in_a_session_of_its_own_reachable_from_the_parent():
    sub = weather_agent(
        [
            calls(call("w1", "search_weather", city="示例城A", date="2025-05-01")),
            {"role": "assistant", "content": "示例城A 降雨概率 0.8，带伞"},
        ]
    )
    tool = sub.as_tool("ask_weather", "查询天气的子任务")
    assert tool.name == "ask_weather" and tool.description == "查询天气的子任务"
    assert list(tool.parameters["properties"]) == ["task"]
    parent_model = an.models.ScriptedModel(
        [
            calls(call("p1", "ask_weather", task="示例城A 五一会下雨吗？")),
            {"role": "assistant", "content": "要带伞"},
        ]
    )
    parent = an.Agent("旅行助手", tools=[tool], model=parent_model)
    session = an.Session()
    result = await parent.run("五一去示例城A要带伞吗", session=session)
    assert result.output == "要带伞"
    wire = session.to_openai()
    assert_valid_conversation(wire)
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "assistant"]
    assert wire[2]["content"] == "示例城A 降雨概率 0.8，带伞"  # the parent sees only the answer
    (finished,) = [e for e in result.events if isinstance(e, ToolFinished)]
    assert finished.subsession_id is not None and finished.ok
    child = session.subsessions[finished.subsession_id]
    assert child is not session and child.id.startswith(session.id)
    child_wire = child.to_openai()
    assert_valid_conversation(child_wire)
    assert child_wire[0] == {"role": "user", "content": "示例城A 五一会下雨吗？"}
    assert content(child_wire[2])["rain_probability"] == 0.8
    assert sub.model.requests[0].messages[0] == {"role": "system", "content": "你只查天气。"}


async def test_two_sub_agent_calls_in_one_reply_get_two_sessions():
    sub = an.Agent(
        model=an.models.FunctionModel(
            lambda req: {"role": "assistant", "content": "答：" + req.messages[-1]["content"]}
        ),
        name="helper",
    )
    parent_model = an.models.ScriptedModel(
        [
            calls(call("a", "helper", task="一"), call("b", "helper", task="二")),
            {"role": "assistant", "content": "好"},
        ]
    )
    session = an.Session()
    result = await an.Agent(tools=[sub.as_tool()], model=parent_model).run("x", session=session)
    ids = [e.subsession_id for e in result.events if isinstance(e, ToolFinished)]
    assert len(set(ids)) == 2 and set(ids) == set(session.subsessions)
    answers = sorted(s.to_openai()[-1]["content"] for s in session.subsessions.values())
    assert answers == ["答：一", "答：二"]


async def test_a_sub_agent_without_an_answer_is_a_tool_error_the_parent_reads():
    sub = weather_agent(
        [calls(call(f"w{i}", "search_weather", city="A", date=str(i))) for i in range(3)]
    )
    sub.max_iterations = 2
    parent_model = an.models.ScriptedModel(
        [calls(call("p1", "weather", task="A?")), {"role": "assistant", "content": "查不到"}]
    )
    session = an.Session()
    result = await an.Agent(tools=[sub.as_tool()], model=parent_model).run("?", session=session)
    body = content(session.to_openai()[2])
    assert session.to_openai()[2]["role"] == "tool"
    assert body["kind"] == "tool_error" and "max_iterations" in body["error"]
    assert body["subsession_id"] in session.subsessions
    assert result.output == "查不到"


async def test_a_cancelled_parent_cancels_the_sub_run_and_both_stay_valid():
    gate = asyncio.Event()

    @an.tool
    async def slow(city: str) -> str:
        """慢."""
        gate.set()
        await asyncio.sleep(30)
        return "never"

    sub = an.Agent(
        tools=[slow],
        model=an.models.ScriptedModel([calls(call("s1", "slow", city="A"))]),
        name="slowpoke",
    )
    parent_model = an.models.ScriptedModel([calls(call("p1", "slowpoke", task="A"))])
    session = an.Session()
    run = an.Agent(tools=[sub.as_tool()], model=parent_model).start("go", session=session)
    finishing = asyncio.ensure_future(run.finish())
    await asyncio.wait_for(gate.wait(), 5)
    run.cancel()
    result = await asyncio.wait_for(finishing, 10)
    assert result.stop_reason == "cancelled"
    assert_valid_conversation(session.to_openai())
    (child,) = session.subsessions.values()
    # the sub-run is cancelled with its task; it repairs its session
    await eventually(lambda: child.active_run is None, what="the sub-run's end")
    assert_valid_conversation(child.to_openai())


@pytest.mark.parametrize("threaded", [True, False])
async def test_a_tool_reads_its_call_and_session(threaded):
    seen = []

    def whoami(x: int) -> str:
        here = current_call()
        seen.append((here.call_id, here.name, here.session.id))
        return "ok"

    tool = an.tool(whoami, threaded=threaded)
    tool.call_context = True  # opted in (off by default: it costs every call)
    model = an.models.ScriptedModel(
        [calls(call("c1", "whoami", x=1)), {"role": "assistant", "content": "ok"}]
    )
    session = an.Session()
    await an.Agent(tools=[tool], model=model).run("?", session=session)
    assert seen == [("c1", "whoami", session.id)]
    assert current_call() is None  # and nothing leaks out of the run
    tool.call_context = False
    seen_none = []

    def whoami_plain(x: int) -> str:
        seen_none.append(current_call())
        return "ok"

    plain = an.tool(whoami_plain, name="whoami")
    model = an.models.ScriptedModel(
        [calls(call("c2", "whoami", x=1)), {"role": "assistant", "content": "ok"}]
    )
    await an.Agent(tools=[plain], model=model).run("?")
    assert seen_none == [None]  # not opted in: no context
