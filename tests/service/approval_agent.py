"""The agent of the approval tests: it pays (after a person's yes), then says how it went.

``AGENTNB_EFFECTS`` (when set) gets a line per payment begun and ended, with the call's key;
``AGENTNB_TOOL_SECONDS`` is how long the bank takes.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import agentnb as an
from agentnb.models import FunctionModel


def _note(kind: str, key: str) -> None:
    path = os.environ.get("AGENTNB_EFFECTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{kind} {key} {os.getpid()}\n")


@an.tool(side_effects=True, approval=True)
async def pay(amount: int) -> str:
    """Charges the card (a person approves each payment first)."""
    ctx = an.tools.current_call()
    key = ctx.idempotency_key if ctx is not None else None
    _note("effect", str(key))
    await asyncio.sleep(float(os.environ.get("AGENTNB_TOOL_SECONDS", "0")))
    _note("end", str(key))
    return f"paid {amount}"


def reply(request: Any) -> dict[str, Any]:
    last = request.messages[-1]
    if last["role"] == "user":
        args = json.dumps({"amount": int(last["content"])})
        call = {"id": "p1", "type": "function", "function": {"name": "pay", "arguments": args}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}
    outcome = json.loads(last["content"]) if last["content"].startswith("{") else {}
    if outcome.get("kind"):
        return {"role": "assistant", "content": f"{outcome['kind']}: {outcome.get('error')}"}
    return {"role": "assistant", "content": last["content"]}


def make_agent() -> an.Agent:
    return an.Agent("Pay what is asked.", [pay], model=FunctionModel(reply))
