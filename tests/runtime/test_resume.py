"""A run resumes a round cut short: the session ends in open calls, the loop enters at
execute_tools, and a side-effecting call that may already have run is answered uncertain."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb.models import ScriptedModel
from tests.helpers import assert_valid_conversation, call, calls


def _desk(ran: list[str]) -> list[an.Tool]:
    @an.tool
    def lookup(city: str) -> str:
        """Read only."""
        ran.append(f"lookup {city}")
        return "G1"

    @an.tool(side_effects=True)
    def book(train: str) -> str:
        """Books a seat."""
        ran.append(f"book {train}")
        return "booked"

    return [lookup, book]


def _cut_short() -> an.Session:
    """A session whose last round never got its results (its worker died)."""
    session = an.Session()
    session.append({"role": "user", "content": "北京, G1"})
    session.append(calls(call("a", "lookup", city="北京"), call("b", "book", train="G1")))
    assert session.open_calls == {"a": "lookup", "b": "book"}
    return session


async def test_the_loop_enters_at_execute_tools() -> None:
    ran: list[str] = []
    model = ScriptedModel(["done"])
    agent = an.Agent(tools=_desk(ran), model=model)
    session = _cut_short()
    run = agent.start(None, session=session, task_id="t-1", trace_id="f" * 32)
    stages = []
    while not run.done:
        stages.append((await run.step()).stage)
    assert stages == [
        "restore",
        "execute_tools",
        "check_stop",
        "assemble",
        "call_model",
        "decide",
        "check_stop",
        "persist",
    ]
    assert ran == ["lookup 北京", "book G1"]  # nothing said they had started: both run
    assert_valid_conversation(session)
    result = run.result
    assert result is not None and result.output == "done"
    assert [e.type for e in result.events][:2] == ["RunStarted", "ContextRestored"]
    assert result.events[-1].type == "RunStopped"
    assert session.runs[-1] is run.record and run.record.task_id == "t-1"
    assert {e.trace_id for e in result.events} == {"f" * 32}
    assert [m.role for m in result.messages] == ["tool", "tool", "assistant"]
    model.assert_complete()


async def test_an_interrupted_side_effect_is_answered_uncertain_and_never_rerun() -> None:
    ran: list[str] = []
    agent = an.Agent(tools=_desk(ran), model=ScriptedModel(["checked"]))
    session = _cut_short()
    result = await agent.start(None, session=session, interrupted={"a", "b"}).finish()
    assert ran == ["lookup 北京"]  # the lookup runs again; the booking does not
    tools = [m for m in session.to_openai() if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["a", "b"]  # call order kept
    assert tools[0]["content"] == "G1"
    answer = json.loads(tools[1]["content"])
    assert answer["kind"] == "uncertain" and "may or may not" in answer["error"]
    finished = {e.call_id: e.kind for e in result.events if e.type == "ToolFinished"}
    assert finished == {"a": None, "b": "uncertain"}
    started = {e.call_id: e.idempotency_key for e in result.events if e.type == "ToolStarted"}
    assert started["a"] is None and started["b"].startswith(f"{session.id}:1:b:")  # its key
    assert answer["idempotency_key"] == started["b"]
    assert_valid_conversation(session)


async def test_a_resumed_run_obeys_the_stop_policies() -> None:
    ran: list[str] = []
    model = ScriptedModel([])
    agent = an.Agent(tools=_desk(ran), model=model, stop_when=[lambda view: "enough"])
    result = await agent.start(None, session=_cut_short()).finish()
    assert (result.stop_reason, result.stop_detail) == ("custom", "enough")
    assert result.iterations == 0 and ran == ["lookup 北京", "book G1"]


async def test_a_new_input_on_open_calls_is_refused_and_other_problems_too() -> None:
    agent = an.Agent(tools=_desk([]), model=ScriptedModel(["x"]))
    session = _cut_short()
    with pytest.raises(an.InvalidConversation, match="no tool result yet"):
        await agent.run("another question", session=session)
    assert len(session) == 2
    broken = an.Session()
    broken.append({"role": "user", "content": "hi"})
    broken.append({"role": "tool", "tool_call_id": "zz", "name": "lookup", "content": "?"})
    with pytest.raises(an.InvalidConversation, match="answers no open call"):
        await agent.run(None, session=broken)


def test_bad_ids_are_configuration_errors() -> None:
    agent = an.Agent(model=ScriptedModel(["x"]))
    for bad in ("", 7):
        with pytest.raises(an.ConfigurationError, match="trace_id"):
            agent.start("hi", trace_id=bad)  # type: ignore[arg-type]
