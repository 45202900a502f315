"""The hot path keeps every guarantee: what each cost cut must never change (issue 13 §7)."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import agentnb as an
from agentnb import _fast
from agentnb.messages import AssistantMessage, UserMessage, reply_message, text_message
from agentnb.models import FunctionModel, ScriptedModel
from tests.helpers import call, calls, eventually

BENCH = Path(__file__).parents[2] / "scripts" / "bench.py"


def answers(session: an.Session) -> list[str]:
    return [m["content"] for m in session.to_openai() if m["role"] == "tool"]


class CountingLoop(asyncio.SelectorEventLoop):
    turns = 0

    def _run_once(self) -> None:
        self.turns += 1
        super()._run_once()  # type: ignore[misc]


def turns_of(agent: an.Agent) -> int:
    loop = CountingLoop()
    try:
        result = loop.run_until_complete(agent.run("go"))
        assert result.stop_reason == "final_answer"
        return loop.turns
    finally:
        loop.close()


@pytest.mark.skipif(_fast.PLAIN, reason="the eager first step is a trick; its plain twin waits")
def test_an_isolated_tool_that_never_suspends_costs_no_turn_of_the_event_loop():
    @an.tool
    async def instant(n: int) -> int:
        """Instant."""
        return n

    many = [calls(call(f"c{i}", "instant", n=i)) for i in range(6)] + ["done"]
    with_tools = turns_of(an.Agent("", [instant], model=ScriptedModel(many)))
    without = turns_of(an.Agent("", [instant], model=ScriptedModel(["done"])))
    assert with_tools <= without + 1  # six calls: no task step, timer or wake-up to wait for


async def test_isolated_tools_run_as_their_own_task_from_their_first_line():
    """asyncio.timeout and task groups inside a tool work: it is its own task before it waits."""
    outer = asyncio.current_task()
    seen: list[Any] = []
    flag: contextvars.ContextVar[str] = contextvars.ContextVar("flag", default="run")

    @an.tool
    async def careful(seconds: float) -> str:
        """Gives up on a slow upstream on its own."""
        seen.append(asyncio.current_task())
        flag.set("tool")  # its own context: never the run's
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(seconds)
        except TimeoutError:
            return "upstream slow"
        return "fine"

    @an.tool
    async def fan_out(n: int) -> list[int]:
        """Asks n upstreams at once."""

        async def one(i: int) -> int:
            await asyncio.sleep(0)
            return i

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(i)) for i in range(n)]
        return [t.result() for t in tasks]

    replies = [calls(call("a", "careful", seconds=5), call("b", "fan_out", n=3)), "done"]
    result = await an.Agent("", [careful, fan_out], model=ScriptedModel(replies)).run("go")
    assert result.stop_reason == "final_answer"
    assert answers(result.session) == ["upstream slow", "[0, 1, 2]"]
    assert seen[0] is not outer and isinstance(seen[0], asyncio.Task)
    assert flag.get() == "run"


async def test_an_isolated_tool_that_suspends_and_ignores_cancellation_still_times_out():
    started: list[bool] = []
    ended: list[bool] = []

    @an.tool(timeout=0.05)
    async def stubborn(x: int) -> int:
        """Swallows its cancellation once and answers late."""
        started.append(True)
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)  # still busy after the deadline
        ended.append(True)
        return 1

    model = ScriptedModel([calls(call("c", "stubborn", x=1)), "done"])
    result = await asyncio.wait_for(an.Agent("", [stubborn], model=model).run("go"), 0.15)
    assert started and json.loads(answers(result.session)[0])["kind"] == "timeout"
    await eventually(lambda: ended)  # let the abandoned tool end before the loop closes


async def test_an_isolated_tools_first_step_counts_against_its_timeout():
    @an.tool(timeout=0.25)
    async def slow_start(x: int) -> int:
        """Blocks before its first wait, then waits long."""
        time.sleep(0.3)  # already past the deadline when it first suspends
        await asyncio.sleep(5)
        return 1

    model = ScriptedModel([calls(call("c", "slow_start", x=1)), "done"])
    started = time.monotonic()
    result = await an.Agent("", [slow_start], model=model).run("go")
    assert time.monotonic() - started < 0.5  # not 0.3 s plus another 0.25 s
    assert json.loads(answers(result.session)[0])["kind"] == "timeout"


async def test_sync_tools_reuse_their_threads():
    threads: list[int] = []

    @an.tool
    def lookup(n: int) -> int:
        """A blocking lookup."""
        threads.append(threading.get_ident())
        return n

    replies = [calls(call(f"c{i}", "lookup", n=i)) for i in range(5)] + ["done"]
    before = {t.ident for t in threading.enumerate()}
    await an.Agent("", [lookup], model=ScriptedModel(replies), repeat_limit=0).run("go")
    assert len(threads) == 5 and len(set(threads) - before) <= 1  # one new thread at most
    assert threading.get_ident() not in threads  # never the loop's thread


async def test_a_run_leaves_nothing_for_the_cyclic_garbage_collector():
    @an.tool
    async def instant(n: int) -> int:
        """Instant."""
        return n

    def respond(request: Any) -> Any:
        return "ok" if request.messages[-1]["role"] == "tool" else calls(call("c", "instant", n=1))

    agent = an.Agent("", [instant], model=FunctionModel(respond))
    await agent.run("warm up")
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            session = an.Session()
            await agent.run("go", session=session)
            del session
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_well_formed_replies_are_built_exactly_as_validation_would():
    shapes = [
        {"role": "assistant", "content": "你好"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f", x=1)]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("a", "f"), call("b", "g", y="二")],
        },
        {"role": "assistant", "tool_calls": [call("a", "f", x=[1, 2])]},
    ]
    for shape in shapes:
        fast, slow = reply_message(shape), AssistantMessage.model_validate(shape)
        assert fast is not None and fast == slow and fast.tool_calls == slow.tool_calls
        assert fast.wire() == slow.model_dump(mode="json", exclude_unset=True)
        assert fast.wire() is not shape and fast.to_openai() == slow.to_openai()
        assert fast.model_fields_set == slow.model_fields_set and fast.tokens == slow.tokens


def test_text_inputs_and_replies_are_built_exactly_as_validation_would():
    for cls in (UserMessage, AssistantMessage):
        fast, slow = text_message(cls, "你好"), cls(content="你好")
        assert fast == slow and fast.wire() == slow.wire() == {"role": fast.role, "content": "你好"}
        assert fast.model_fields_set == slow.model_fields_set and fast.tokens == slow.tokens
        assert fast.model_dump() == slow.model_dump() and fast.model_extra == slow.model_extra
    parts = ({"type": "text", "text": "看图"},)
    assert text_message(UserMessage, parts) == UserMessage(content=parts)  # type: ignore[arg-type]


def test_built_messages_share_nothing_a_copy_can_change():
    # Built messages share their field-name sets and empty extras (280 bytes less each):
    # a copy, an update or an attempted assignment must leave the others as they were.
    one, other = text_message(UserMessage, "一"), text_message(UserMessage, "二")
    reply = reply_message({"role": "assistant", "content": "好"})
    changed = one.model_copy(update={"name": "alice", "mood": "glad"})
    assert changed.model_fields_set == {"content", "name", "mood"}
    assert changed.model_extra == {"mood": "glad"} and changed.wire()["name"] == "alice"
    with pytest.raises(ValidationError):
        other.name = "bob"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        other.mood = "sad"  # type: ignore[attr-defined]
    assert one.model_fields_set == other.model_fields_set == {"content"}
    assert one.model_extra == other.model_extra == {} and reply is not None
    assert reply.model_fields_set == {"role", "content"} and reply.model_extra == {}
    assert one.wire() == {"role": "user", "content": "一"}


def test_replies_of_any_other_shape_take_the_validating_path():
    bad_call = {"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    others = [
        {"role": "assistant", "content": None},  # empty: refused on the slow path
        {"role": "assistant", "content": "x", "tool_calls": None},  # an SDK dump: normalised
        {"role": "assistant", "content": "x", "refusal": None},
        {"role": "assistant", "tool_calls": [{**call("a", "f"), "function": {"name": "f"}}]},
        {"role": "assistant", "tool_calls": [bad_call]},
        {"role": "assistant", "tool_calls": []},
        {"role": "assistant", "content": ["not", "text"]},
    ]
    assert all(reply_message(other) is None for other in others)
    model = FunctionModel(lambda request: {"role": "assistant", "tool_calls": [bad_call]})
    with pytest.raises(an.ModelResponseError, match=r"tool_calls\.0\.id"):
        an.Agent("", model=model).run_sync("x")


def test_an_iteration_costs_at_most_200_python_calls():
    """The hot path's budget, counted as ``make bench`` does, over every code object (the
    dataclass ``__init__``s cProfile's table merges included), in a fresh interpreter (cProfile
    counts do not vary with machine load, but other tests' leftovers — their garbage, their
    tasks being freed — would be counted too): four async tools, every event recorded, every
    reply parsed."""
    code = (
        "import asyncio, gc, importlib.util, sys\n"
        f"sys.path.insert(0, {str(BENCH.parent)!r})\n"
        "import bench\n"
        "agent = bench.make_agent()\n"
        "async def once(): await agent.run('去北京出差')\n"
        "gc.collect()\n"
        "print(bench.calls_per_unit(once, runs=20)[0])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "AGENTNB_PLAIN"}  # the fast path's budget
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    calls_per_iteration = float(out.stdout.strip().splitlines()[-1])
    assert calls_per_iteration <= 200, f"{calls_per_iteration:.0f} calls per loop iteration"
