"""Regression tests for the second round of hostile use: lone surrogates in stores and views,
store failures, tools that ignore cancellation, and developer errors that escaped untyped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from typing import Any

import pytest
from helpers import call, calls

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel
from agentnb.testing import assert_valid_conversation


def test_a_lone_surrogate_is_stored_exactly_and_never_locks_the_session(tmp_path):
    store = an.SQLiteStore(tmp_path / "s.db")
    session = an.Session(id="t1", store=store)
    agent = an.Agent("x", model=ScriptedModel(["reply \udfff", "ok"]))
    agent.run_sync("hi \ud800", session=session)
    assert store.load("t1").to_openai() == session.to_openai()  # lossless
    assert session.active_run is None and agent.run_sync("again", session=session).output == "ok"
    an.Memory(store, user="bob").remember("fact \ud800")
    assert an.Memory(store, user="bob").items()[0]["text"] == "fact \ud800"
    with pytest.raises(an.ConfigurationError, match="user"):
        an.Memory(store, user="\ud800")


class BrokenStore(an.MemoryStore):
    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        raise RuntimeError("disk on fire")


def test_a_failing_store_raises_a_store_error_and_frees_the_session():
    session = an.Session(store=BrokenStore())
    agent = an.Agent("x", model=ScriptedModel(["ok", "ok"]))
    with pytest.raises(an.StoreError, match="disk on fire") as info:
        agent.run_sync("hi", session=session)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert info.value.result.stop_reason == "final_answer"  # the run ended; saving failed
    assert session.active_run is None and session.lock.holder is None


def test_a_file_that_is_not_a_store_is_a_store_error(tmp_path):
    path = tmp_path / "not.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(an.StoreError, match="cannot be used as an agentnb store"):
        an.SQLiteStore(path)


async def test_a_tool_that_ignores_cancellation_still_times_out():
    @an.tool(timeout=0.1)
    async def stubborn(x: int) -> int:
        """Swallows its cancellation and goes on (for a while)."""
        for _ in range(3):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.5)
        return 5

    model = ScriptedModel([calls(call("c1", "stubborn", x=1)), "done"])
    start = time.monotonic()
    result = await an.Agent("", [stubborn], model=model).run("go")
    assert time.monotonic() - start < 1  # not the 1.5 s the tool insists on
    assert json.loads(result.session.to_openai()[2]["content"])["kind"] == "timeout"
    await asyncio.sleep(1.5)  # let the abandoned tool end before the loop closes


async def test_a_tool_that_ignores_cancellation_cannot_hold_a_cancelled_run():
    started = asyncio.Event()

    @an.tool
    async def stubborn(x: int) -> int:
        """Swallows its cancellation and goes on (for a while)."""
        started.set()
        for _ in range(3):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.5)
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
    await asyncio.sleep(1.5)  # let the abandoned tool end before the loop closes


def test_memory_refuses_what_is_not_text(tmp_path):
    memory = an.Memory(an.SQLiteStore(tmp_path / "m.db"), user="bob")
    for bad in (None, 5, "  "):
        with pytest.raises(an.ConfigurationError, match="non-empty string"):
            memory.remember(bad)  # type: ignore[arg-type]


def test_keep_last_turns_respects_the_window_and_an_overflow_is_never_silent():
    session = an.Session()
    for _ in range(5):
        session.append({"role": "user", "content": "q" + "w" * 800})
        session.append({"role": "assistant", "content": "a" * 800})
    agent = an.Agent("x", model=ScriptedModel(["ok", "ok"]), context_window=600, reply_reserve=100,
                     context=an.KeepLastTurns(3))  # fmt: skip
    event = agent.run_sync("last?", session=session).trace.of_type(an.events.RequestAssembled)[0]
    assert event.budget["total"] <= 500 and "fit the window" in event.note
    huge = an.Agent("x", model=ScriptedModel(["ok"]), context_window=300, reply_reserve=50)
    event = huge.run_sync("z" * 4000).trace.of_type(an.events.RequestAssembled)[0]
    assert event.budget["available"] < 0 and "over the window" in event.note
    with pytest.raises(an.ConfigurationError):
        an.KeepLastTurns(0)


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


def test_a_summariser_model_that_raises_is_a_model_error():
    summariser = an.ModelSummariser(FunctionModel(lambda request: 1 / 0))
    session = an.Session([{"role": "user", "content": "话" * 200} for _ in range(20)])
    agent = an.Agent("x", model=ScriptedModel(["ok"]), context_window=800, reply_reserve=100,
                     context=an.SummariseOldest(summariser))  # fmt: skip
    with pytest.raises(an.ModelCallFailed, match="summariser's model"):
        agent.run_sync("final", session=session)
    assert session.lock.holder is None


def test_importing_a_file_without_a_header_never_drops_a_message(tmp_path):
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"role":"user","content":"first"}\n{"role":"assistant","content":"second"}\n')
    store = an.MemoryStore()
    with pytest.raises(an.ConfigurationError, match="no header line"):
        store.import_jsonl(plain)
    session = store.import_jsonl(plain, session_id="p")
    assert [m["content"] for m in session.to_openai()] == ["first", "second"]
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"\xff\xfe")
    with pytest.raises(an.ConfigurationError, match="not an exported agentnb session"):
        store.import_jsonl(broken, session_id="q")


def test_the_view_sends_every_message_even_with_a_lone_surrogate(comm_recorder=None):
    pytest.importorskip("anywidget")
    session = an.Session()
    view = an.widgets.SessionView(session)
    sent: list[dict] = []
    view.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
    for text in ("a", "lone \ud800", "c"):
        session.append({"role": "user", "content": text})
    indexes = [m.get("i", m.get("index")) for m in sent if m.get("op") in ("append", "msg")]
    assert len([m for m in sent if "lone" in json.dumps(m, ensure_ascii=False)]) == 1
    assert len(indexes) == 3 or len(sent) >= 3
    an.widgets.SessionView(session)  # a second view packs a snapshot with the surrogate


def test_trailing_newlines_are_not_part_of_ids_or_tool_names():
    with pytest.raises(an.ConfigurationError):
        an.Session(id="trip-1\n")
    with pytest.raises(an.ToolDefinitionError):
        an.tool(lambda x: x, name="g\n")


def test_a_trace_nested_too_deeply_is_a_trace_format_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"type": "$agentnb-trace", "version": 2}\n' + "[" * 100_000 + "]" * 100_000)
    with pytest.raises(an.TraceFormatError, match="line 2"):
        an.Trace.load(path)


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
