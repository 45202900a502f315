"""A fake payment service that dedupes by idempotency key, and the agents the worker tests run.

The service is a ledger file shared by every worker process (``AGENTNB_LEDGER``), written
under an exclusive lock: ``charge(key, amount)`` charges once per key and answers a repeat
with the first receipt, as Stripe's ``Idempotency-Key`` does. Every charge and every replay
is a line, so a test counts what reached the world. ``AGENTNB_EFFECTS`` records, per call,
when it began and ended (as ``crash_agent`` does), to see which calls a kill cut short.

Agents: ``make_agent`` pays with its call's idempotency key (``idempotent=True``: after a
crash the payment runs again with the same key; the service replays it); ``make_agent_nokeys``
pays without one (after a crash the payment is answered ``uncertain``, never repeated).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
from typing import Any

import agentnb as an
from agentnb.models import FunctionModel
from tests.service.crash_agent import _call_id, _note, search_trains

TOOL_SECONDS = float(os.environ.get("AGENTNB_TOOL_SECONDS", "0.25"))


def charge(key: str, amount: int) -> dict[str, Any]:
    """Charge ``amount`` once per ``key``; a repeat gets the first receipt back."""
    with open(os.environ["AGENTNB_LEDGER"], "a+", encoding="utf-8") as ledger:
        fcntl.flock(ledger, fcntl.LOCK_EX)
        ledger.seek(0)
        for line in ledger:
            row = json.loads(line)
            if row["key"] == key and row["kind"] == "charge":
                ledger.write(json.dumps({"kind": "replay", "key": key}) + "\n")
                return {"receipt": row["receipt"], "replayed": True}
        receipt = f"rcpt-{os.urandom(4).hex()}"
        row = {"kind": "charge", "key": key, "amount": amount, "receipt": receipt}
        ledger.write(json.dumps({**row, "pid": os.getpid()}) + "\n")
        return {"receipt": receipt, "replayed": False}


def ledger() -> list[dict[str, Any]]:
    path = os.environ["AGENTNB_LEDGER"]
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


async def pay(train: str, call: str) -> dict[str, Any]:
    """Pay for a seat with the call's idempotency key (the service dedupes by it)."""
    ctx = an.tools.current_call()
    assert ctx is not None and ctx.idempotency_key, "a side-effecting call carries its key"
    _note("effect", call)
    receipt = charge(ctx.idempotency_key, 880)
    await asyncio.sleep(TOOL_SECONDS)  # charged, the bank is slow to answer: a kill lands here
    _note("end", call)
    return {"paid": train, **receipt}


async def pay_nokeys(train: str, call: str) -> dict[str, Any]:
    """Pay for a seat (a key per call, so every run of the tool charges again)."""
    _note("effect", call)
    receipt = charge(f"{call}-{os.urandom(4).hex()}", 880)
    await asyncio.sleep(TOOL_SECONDS)
    _note("end", call)
    return {"paid": train, **receipt}


def reply(request: Any) -> dict[str, Any]:
    messages = request.messages
    last = messages[-1]
    if last["role"] == "user":
        name, args = "search_trains", {"city": "北京"}
    elif last["role"] == "tool" and last["name"] == "search_trains":
        name, args = "pay", {"train": "G1"}
    else:
        task = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        outcome = json.loads(last["content"]) if last["role"] == "tool" else {}
        word = "uncertain" if outcome.get("kind") == "uncertain" else "paid"
        return {"role": "assistant", "content": f"{word}: {task}"}
    call = _call_id(messages, name)
    args["call"] = call
    function = {"name": name, "arguments": json.dumps(args)}
    tool_calls = [{"id": call, "type": "function", "function": function}]
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def make_agent() -> an.Agent:
    tools = [an.tool(search_trains), an.tool(pay, side_effects=True, idempotent=True)]
    return an.Agent("Pay for trains.", tools, model=FunctionModel(reply), max_iterations=6)


def make_agent_nokeys() -> an.Agent:
    tools = [an.tool(search_trains), an.tool(pay_nokeys, name="pay", side_effects=True)]
    return an.Agent("Pay for trains.", tools, model=FunctionModel(reply), max_iterations=6)
