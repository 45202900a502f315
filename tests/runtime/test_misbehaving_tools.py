"""Tools and models under hostile use: tools that ignore cancellation, failures that cannot be printed, names with trailing newlines, a model removed between steps."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import pytest

import agentnb as an
from agentnb.models import ScriptedModel
from agentnb.testing import assert_valid_conversation
from tests.helpers import call, calls, eventually


async def test_a_tool_that_ignores_cancellation_still_times_out():
    ended: list[int] = []

    @an.tool(timeout=0.1)
    async def stubborn(x: int) -> int:
        """Swallows its cancellation and goes on (for a while)."""
        for _ in range(3):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.5)
        ended.append(x)
        return 5

    model = ScriptedModel([calls(call("c1", "stubborn", x=1)), "done"])
    start = time.monotonic()
    result = await an.Agent("", [stubborn], model=model).run("go")
    assert time.monotonic() - start < 1  # not the 1.5 s the tool insists on
    assert json.loads(result.session.to_openai()[2]["content"])["kind"] == "timeout"
    await eventually(lambda: ended)  # let the abandoned tool end before the loop closes


async def test_a_tool_that_ignores_cancellation_cannot_hold_a_cancelled_run():
    started = asyncio.Event()
    ended: list[int] = []

    @an.tool
    async def stubborn(x: int) -> int:
        """Swallows its cancellation and goes on (for a while)."""
        started.set()
        for _ in range(3):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.5)
        ended.append(x)
        return 5

    session = an.Session()
    run = an.Agent("", [stubborn], model=ScriptedModel([calls(call("c1", "stubborn", x=1))])).start(
        "go", session=session
    )
    task = asyncio.ensure_future(run.finish())
    await started.wait()
    run.cancel()
    result = await asyncio.wait_for(task, 1)  # not the 1.5 s the tool insists on
    assert result.stop_reason == "cancelled" and session.lock.holder is None
    assert_valid_conversation(session)
    await eventually(lambda: ended)  # let the abandoned tool end before the loop closes


def test_tool_failures_that_cannot_be_printed_still_become_results():
    class BadExc(Exception):
        def __str__(self) -> str:
            raise RuntimeError("str boom")

    @an.tool
    def f(x: int) -> int:
        """Raises an exception that cannot be printed."""
        raise BadExc()

    @an.tool
    def g(x: int) -> int:
        """Raises a ToolError with a hint JSON cannot hold."""
        raise an.ToolError("failed", hint={"detail": object()})  # type: ignore[arg-type]

    model = ScriptedModel([calls(call("a", "f", x=1), call("b", "g", x=1)), "done"])
    result = an.Agent("", [f, g], model=model).run_sync("go")
    results = [json.loads(m["content"]) for m in result.session.to_openai() if m["role"] == "tool"]
    assert [r["kind"] for r in results] == ["tool_error", "tool_error"]
    assert "cannot be shown" in results[0]["error"] and "object" in str(results[1]["hint"])


def test_trailing_newlines_are_not_part_of_ids_or_tool_names():
    with pytest.raises(an.ConfigurationError):
        an.Session(id="trip-1\n")
    with pytest.raises(an.ToolDefinitionError):
        an.tool(lambda x: x, name="g\n")


async def test_a_model_removed_between_steps_is_a_configuration_error():
    agent = an.Agent("", model=ScriptedModel(["ok"]))
    run = agent.start("hi")
    await run.step()
    await run.step()
    agent.model = None
    with pytest.raises(an.ConfigurationError, match="has no model"):
        await run.step()
    assert run.session.lock.holder is None


async def test_tools_awaited_in_the_runs_task_still_time_out_and_late_results_stay_late():
    @an.tool(timeout=0.05, isolated=False)
    async def slow(x: int) -> int:
        """Slow, lets cancellation through."""
        await asyncio.sleep(10)
        return 1

    @an.tool(timeout=0.05, isolated=False)
    async def late(x: int) -> int:
        """Swallows one cancellation, then answers."""
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(10)
        return 2

    @an.tool(isolated=False)
    async def quick(x: int) -> int:
        """Instant."""
        return 3

    replies = [calls(call("a", "slow", x=1), call("b", "late", x=1), call("c", "quick", x=1)), "ok"]
    result = await an.Agent("", [slow, late, quick], model=ScriptedModel(replies)).run("go")
    contents = [m["content"] for m in result.session.to_openai() if m["role"] == "tool"]
    assert [json.loads(c)["kind"] for c in contents[:2]] == ["timeout", "timeout"]
    assert contents[2] == "3"
    assert not an.tool(quick.fn, name="q2", isolated=False).isolated and slow.is_async
