"""The agent the kill -9 test's workers run: look up a train, book it, answer.

Every call appends a line to the file named by ``AGENTNB_EFFECTS`` (``run``/``effect``/``end``,
the call id, the process id): the external record that proves a side effect happened at
most once per call, whatever the workers went through.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from typing import Any

import agentnb as an
from agentnb.models import FunctionModel

TOOL_SECONDS = float(os.environ.get("AGENTNB_TOOL_SECONDS", "0.25"))


def _note(kind: str, call_id: str) -> None:
    with open(os.environ["AGENTNB_EFFECTS"], "a", encoding="utf-8") as f:
        f.write(f"{kind} {call_id} {os.getpid()}\n")


def _call_id(messages: list[dict[str, Any]], name: str) -> str:
    """Deterministic per conversation point: a replayed model call asks the same call."""
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:12]
    return f"call_{name}_{digest}"


async def search_trains(city: str, call: str) -> dict[str, Any]:
    """Trains to a city (no side effects: safe to run again)."""
    _note("run", call)
    await asyncio.sleep(TOOL_SECONDS / 4)
    return {"city": city, "train": "G1"}


async def book_train(train: str, call: str) -> dict[str, Any]:
    """Book a seat: changes the world, never to be repeated blindly."""
    _note("effect", call)
    if keys := os.environ.get("AGENTNB_KEYS"):  # the key this booking was made under
        with open(keys, "a", encoding="utf-8") as f:
            f.write(f"{an.tools.current_call().idempotency_key}\n")
    await asyncio.sleep(TOOL_SECONDS)
    _note("end", call)
    return {"booked": train}


def reply(request: Any) -> dict[str, Any]:
    messages = request.messages
    last = messages[-1]
    if last["role"] == "user" and os.environ.get("AGENTNB_BOOK_FIRST") == "1":  # no lookup
        name, args = "book_train", {"train": "G1"}
    elif last["role"] == "user":
        name, args = "search_trains", {"city": "北京"}
    elif last["role"] == "tool" and last["name"] == "search_trains":
        name, args = "book_train", {"train": "G1"}
    else:
        task = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        outcome = json.loads(last["content"]) if last["role"] == "tool" else {}
        word = "uncertain" if outcome.get("kind") == "uncertain" else "booked"
        return {"role": "assistant", "content": f"{word}: {task}"}
    call = _call_id(messages, name)
    args["call"] = call
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def make_agent() -> an.Agent:
    idempotent = os.environ.get("AGENTNB_IDEMPOTENT") == "1"  # the system dedupes by the key
    booking = an.tool(book_train, side_effects=True, idempotent=idempotent)
    tools = [an.tool(search_trains), booking]
    return an.Agent("Book trains.", tools, model=FunctionModel(reply), max_iterations=6)
