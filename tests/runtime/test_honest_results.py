"""Honest tool results (issue 14 §2): a call that ran is reported as ran, each result is taken
the moment its call returns, and a tool that raised keeps its traceback for the developer."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from fractions import Fraction

import pytest

import agentnb as an
from agentnb.events import ToolFinished
from agentnb.models import ScriptedModel
from tests.helpers import call, calls


def finished(result: an.RunResult) -> dict[str, ToolFinished]:
    return {e.call_id: e for e in result.events if isinstance(e, ToolFinished)}


def answers(session: an.Session) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in session.to_openai() if m["role"] == "tool"}


async def test_values_json_cannot_hold_are_sent_as_text_and_the_call_is_ok():
    @an.tool
    def third() -> object:
        """A fraction."""
        return Fraction(1, 3)

    @an.tool
    async def nothing() -> object:
        """An ellipsis."""
        return ...

    @an.tool(threaded=False)
    def nested() -> object:
        """A fraction inside JSON."""
        return {"share": Fraction(2, 3), "n": 2, "nan": float("nan")}

    model = ScriptedModel(
        [calls(call("a", "third"), call("b", "nothing"), call("c", "nested")), "done"]
    )
    result = await an.Agent("", [third, nothing, nested], model=model).run("go")
    events = finished(result)
    assert answers(result.session) == {
        "a": "1/3",
        "b": "Ellipsis",
        "c": '{"share": "2/3", "n": 2, "nan": null}',
    }
    assert all(e.ok and e.kind is None and e.traceback is None for e in events.values())
    assert "Fraction" in (events["a"].note or "") and "ellipsis" in (events["b"].note or "")
    assert all(m.ok for m in result.session.messages if m.role == "tool")
    assert result.stop_reason == "final_answer"


def test_to_content_of_what_json_cannot_hold_never_raises():
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no text")

    cyclic: list[object] = []
    cyclic.append(cyclic)
    assert an.tools.to_content(Fraction(1, 3)) == "1/3"
    assert an.tools.to_content({(1, 2): "tuple key"}) == "{(1, 2): 'tuple key'}"
    assert an.tools.to_content(cyclic) == "[[...]]"
    assert an.tools.to_content(Broken()) == "<Broken whose text cannot be shown>"
    assert an.tools.to_content({"ok": [1, 2.5, None]}) == '{"ok": [1, 2.5, null]}'


@pytest.mark.parametrize("kind", ["async_instant", "async_suspending", "thread"])
async def test_concurrent_calls_never_show_each_others_later_effects(kind):
    """The first call returns live state; the second changes it right after the first returned."""
    state = {"seats": ["12A"]}

    if kind == "thread":
        returning = threading.Event()

        @an.tool
        def look() -> dict:
            """The live state."""
            time.sleep(0.02)
            returning.set()
            return state

        @an.tool
        def book(seat: str) -> str:
            """Books a seat the moment the look returns."""
            returning.wait(2)
            state["seats"].append(seat)
            return "booked"

    else:
        suspends = kind == "async_suspending"
        looked = asyncio.Event()

        @an.tool
        async def look() -> dict:
            """The live state."""
            if suspends:
                await asyncio.sleep(0.01)
            looked.set()
            return state

        @an.tool
        async def book(seat: str) -> str:
            """Books a seat the moment the look returns."""
            await looked.wait()
            state["seats"].append(seat)
            return "booked"

    model = ScriptedModel([calls(call("a", "look"), call("b", "book", seat="14C")), "done"])
    result = await an.Agent("", [look, book], model=model).run("go")
    assert state["seats"] == ["12A", "14C"]  # the second call did change it ...
    assert json.loads(answers(result.session)["a"]) == {"seats": ["12A"]}  # ... after the first


def broken_helper(city: str) -> dict:
    raise KeyError(f"no weather for {city}")  # the line a developer needs


@pytest.mark.parametrize("kind", ["sync", "async_instant", "async_suspending"])
async def test_a_tool_that_raises_keeps_its_traceback_and_the_model_hears_it_failed(kind, tmp_path):
    if kind == "sync":

        @an.tool
        def weather(city: str) -> dict:
            """Weather."""
            return broken_helper(city)

    else:
        suspends = kind == "async_suspending"

        @an.tool
        async def weather(city: str) -> dict:
            """Weather."""
            if suspends:
                await asyncio.sleep(0.01)
            return broken_helper(city)

    model = ScriptedModel([calls(call("w", "weather", city="北京")), "sorry"])
    result = await an.Agent("", [weather], model=model).run("go")
    event = finished(result)["w"]
    assert not event.ok and event.kind == "tool_error" and event.traceback is not None
    raising_line = broken_helper.__code__.co_firstlineno + 1
    assert f'{__file__}", line {raising_line}, in broken_helper' in event.traceback
    assert "in weather" in event.traceback and "KeyError: 'no weather for 北京'" in event.traceback
    assert "agentnb/runtime" not in event.traceback  # the tool's own frames, not the runtime's
    error = json.loads(answers(result.session)["w"])
    assert "failed while running" in error["hint"] and "argument" not in error["error"]
    assert "check the arguments" not in error["hint"] and "traceback" not in error  # model: words
    path = result.trace.save(tmp_path / "t.jsonl")
    loaded = [e for e in an.Trace.load(path) if isinstance(e, ToolFinished)]
    assert loaded[0].traceback == event.traceback  # the saved trace keeps it


async def test_a_tool_error_and_bad_arguments_carry_no_traceback():
    @an.tool
    def strict(n: int) -> int:
        """Refuses."""
        raise an.ToolError("no seats", hint="try another day")

    model = ScriptedModel([calls(call("a", "strict", n=1), call("b", "strict", n="x")), "ok"])
    result = await an.Agent("", [strict], model=model).run("go")
    events = finished(result)
    assert [events["a"].kind, events["b"].kind] == ["tool_error", "invalid_arguments"]
    assert events["a"].traceback is None and events["b"].traceback is None
