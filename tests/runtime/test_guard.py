"""Guarded calls in a plain run: idempotency keys, approvals (in memory), at most once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import pytest

import agentnb as an
from agentnb.models import FunctionModel, ScriptedModel
from agentnb.runtime.guard import ApprovalError, Approvals, digest
from tests.helpers import assert_valid_conversation, call, calls


def _desk(paid: list[tuple[int, str | None]], approval: Any = True) -> list[an.Tool]:
    @an.tool
    def quote(amount: int) -> str:
        """Read only."""
        return f"quote {amount}"

    @an.tool(side_effects=True, approval=approval)
    def pay(amount: int) -> str:
        """Charges the card."""
        ctx = an.tools.current_call()
        paid.append((amount, ctx.idempotency_key if ctx else None))
        return f"paid {amount}"

    return [quote, pay]


def _model() -> FunctionModel:
    """Quotes and pays in one reply, then says what it read."""

    def reply(request: Any) -> dict[str, Any]:
        last = request.messages[-1]
        if last["role"] == "user":
            amount = int(last["content"])
            return calls(call("q", "quote", amount=amount), call("p", "pay", amount=amount))
        results = [m["content"] for m in request.messages if m["role"] == "tool"]
        return {"role": "assistant", "content": " | ".join(results)}

    return FunctionModel(reply)


async def test_a_side_effecting_call_carries_its_key() -> None:
    paid: list[tuple[int, str | None]] = []
    agent = an.Agent(tools=_desk(paid, approval=False), model=_model())
    session = an.Session(id="trip")
    result = await agent.run("30", session=session)
    started = {e.call_id: e.idempotency_key for e in result.events if e.type == "ToolStarted"}
    pay = digest("pay", '{"amount": 30}')[:12]
    assert started == {"q": None, "p": f"trip:1:p:{pay}"}  # session : index : call : args
    assert paid == [(30, started["p"])]
    await agent.start("40", task_id="t-1").finish()
    forty = digest("pay", '{"amount": 40}')[:12]
    assert paid[-1] == (40, f"t-1:1:p:{forty}")  # a task's id names it instead


async def test_an_approval_round_trip() -> None:
    paid: list[tuple[int, str | None]] = []
    agent = an.Agent(tools=_desk(paid), model=_model())
    gate = Approvals()
    session = an.Session()
    first = await agent.run("30", session=session, guard=gate)
    assert first.stop_reason == "awaiting_approval" and paid == []
    asked = [e for e in first.events if e.type == "ApprovalRequested"]
    assert [(e.call_id, e.name) for e in asked] == [("p", "pay")]
    assert asked[0].digest == digest("pay", '{"amount": 30}')
    assert session.open_calls == {"p": "pay"}  # the quote ran, the payment waits, open
    assert [m["content"] for m in session.to_openai() if m["role"] == "tool"] == ["quote 30"]
    with pytest.raises(an.InvalidConversation):  # nothing else may come in between
        await agent.run("another", session=session, guard=gate)
    with pytest.raises(ApprovalError, match="other arguments"):
        gate.approve("p", digest=digest("pay", '{"amount": 3000}'))
    gate.approve("p", digest=asked[0].digest)
    second = await agent.run(None, session=session, guard=gate)
    assert second.stop_reason == "final_answer" and second.output == "quote 30 | paid 30"
    assert paid == [(30, asked[0].idempotency_key)]
    assert_valid_conversation(session)


async def test_a_denied_call_reaches_the_model_as_denied() -> None:
    paid: list[tuple[int, str | None]] = []
    agent = an.Agent(tools=_desk(paid), model=_model())
    gate, session = Approvals(), an.Session()
    await agent.run("30", session=session, guard=gate)
    gate.deny("p", "the user said no: too expensive")
    result = await agent.run(None, session=session, guard=gate)
    answer = json.loads(session.to_openai()[-2]["content"])
    assert answer["kind"] == "denied" and answer["error"] == "the user said no: too expensive"
    assert "denied" in an.ERROR_KINDS and paid == []
    assert result.output is not None and "too expensive" in result.output


async def test_an_expired_request_is_denied_and_cannot_be_approved() -> None:
    paid: list[tuple[int, str | None]] = []
    agent = an.Agent(tools=_desk(paid), model=_model())
    gate, session = Approvals(timeout=0.05), an.Session()
    first = await agent.run("30", session=session, guard=gate)
    (asked,) = [e for e in first.events if e.type == "ApprovalRequested"]
    assert asked.expires is not None and asked.expires <= time.time() + 0.05
    time.sleep(0.06)
    with pytest.raises(ApprovalError, match="expired"):
        gate.approve("p", digest=asked.digest)
    await agent.run(None, session=session, guard=gate)
    answer = json.loads(session.to_openai()[-2]["content"])
    assert answer["kind"] == "denied" and "expired" in answer["error"] and paid == []


async def test_an_approval_is_used_at_most_once() -> None:
    """A second run over the same approved call (a retry after a crash that lost the round)
    never pays again: the call is answered uncertain with its key."""
    paid: list[tuple[int, str | None]] = []
    agent = an.Agent(tools=_desk(paid), model=_model())
    gate, session = Approvals(), an.Session()
    first = await agent.run("30", session=session, guard=gate)
    (asked,) = [e for e in first.events if e.type == "ApprovalRequested"]
    gate.approve("p", digest=asked.digest)
    copy = an.Session(session.to_openai(), id=session.id)  # the same round, a second run
    await agent.run(None, session=session, guard=gate)
    await agent.run(None, session=copy, guard=gate)
    assert len(paid) == 1
    answer = json.loads(copy.to_openai()[-2]["content"])
    assert answer["kind"] == "uncertain" and answer["idempotency_key"] == asked.idempotency_key


async def test_approval_by_a_rule_over_the_arguments() -> None:
    paid: list[tuple[int, str | None]] = []
    agent = an.Agent(tools=_desk(paid, approval=lambda a: a["amount"] > 100), model=_model())
    small = await agent.run("30")
    assert small.stop_reason == "final_answer" and paid == [(30, paid[0][1])]
    big = await agent.run("3000")
    assert big.stop_reason == "awaiting_approval" and len(paid) == 1


async def test_a_run_cancelled_while_a_call_waits_says_it_did_not_run() -> None:
    paid: list[tuple[int, str | None]] = []
    agent = an.Agent(tools=_desk(paid), model=_model())
    session = an.Session()
    await agent.run("30", session=session)  # no guard: every approval waits
    run = agent.start(None, session=session)
    await run.step()  # restore: it resumes the waiting round
    run.cancel()
    answer = json.loads(session.to_openai()[-1]["content"])
    assert answer["kind"] == "cancelled" and "did not run" in answer["hint"] and paid == []


async def test_a_side_effect_cut_short_by_a_cancel_is_uncertain_not_cancelled() -> None:
    """Issue 27 M12: the charge happened, then the run was cancelled while the bank was slow
    to answer: reported 'cancelled', the next task charged again. It is uncertain, keyed."""
    charged: list[str] = []
    started = asyncio.Event()

    @an.tool(side_effects=True)
    async def pay(amount: int) -> str:
        """Charges the card."""
        charged.append(str(amount))
        started.set()
        await asyncio.sleep(30)  # the bank is slow to answer
        return "paid"

    @an.tool
    async def look(city: str) -> str:
        """Read only, slow too."""
        await asyncio.sleep(30)
        return "G1"

    model = ScriptedModel([calls(call("p", "pay", amount=30), call("l", "look", city="x"))])
    run = an.Agent(tools=[pay, look], model=model).start("pay 30")
    task = asyncio.ensure_future(run.finish())
    await started.wait()
    run.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    answers = {
        m["tool_call_id"]: json.loads(m["content"])
        for m in run.session.to_openai()
        if m["role"] == "tool"
    }
    assert answers["p"]["kind"] == "uncertain" and answers["p"]["idempotency_key"]
    assert answers["l"]["kind"] == "cancelled"  # a lookup cut short is just cancelled
    assert charged == ["30"]
