"""Shared test helpers: tool-call builders, the transcript validity check, and waiting for
a side effect (:func:`eventually`) instead of sleeping a guessed time."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from agentnb.testing import assert_valid_conversation  # one check: the public one

__all__ = [
    "WEATHER",
    "assert_valid_conversation",
    "call",
    "calls",
    "content",
    "eventually",
    "eventually_sync",
]

#: A tool schema as an OpenAI-compatible server is sent it (the SmolLM2 tests of two tiers).
WEATHER = {
    "type": "function",
    "function": {
        "name": "search_weather",
        "description": "Weather for a city on a date",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
            "required": ["city", "date"],
        },
    },
}


def call(id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def calls(*tool_calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(tool_calls)}


def content(message: dict[str, Any]) -> Any:
    return json.loads(message["content"])


class Holder:
    """A stand-in for a run holding a session's lock (the lock's ``ActiveRun`` protocol)."""

    def __init__(self, id: str) -> None:
        self.id = id
        self.driving = True  # a run mid-stage: waiters wait rather than being refused
        self.stage = "restore"
        self.next_stage: str | None = "assemble"

    def cancel(self) -> None:
        pass


#: How long :func:`eventually` waits by default: far more than any side effect here takes
#: (milliseconds), so a loaded machine slows a test down instead of failing it.
EVENTUALLY = 10.0


def _failed(predicate: Callable[[], Any], timeout: float, what: str) -> AssertionError:
    name = what or getattr(predicate, "__name__", "the condition")
    return AssertionError(f"{name} did not hold within {timeout:g} s")


async def eventually(
    predicate: Callable[[], Any], timeout: float = EVENTUALLY, *, what: str = ""
) -> Any:
    """Wait until ``predicate()`` is true (the event loop runs meanwhile) and return its
    value; an AssertionError naming ``what`` after ``timeout`` seconds. For a side effect a
    test waits for (a worker took the task, a message reached the view), where a sleep of a
    guessed length is slow when it is long enough and flaky when it is not."""
    deadline = time.monotonic() + timeout
    pause = 0.0  # a first look after one turn of the loop, then every millisecond or so
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise _failed(predicate, timeout, what)
        await asyncio.sleep(pause)
        pause = min(0.01, pause * 2 or 0.0005)
    return value


def eventually_sync(
    predicate: Callable[[], Any], timeout: float = EVENTUALLY, *, what: str = ""
) -> Any:
    """:func:`eventually` for a test with no event loop (another thread or process works)."""
    deadline = time.monotonic() + timeout
    pause = 0.0005
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise _failed(predicate, timeout, what)
        time.sleep(pause)
        pause = min(0.01, pause * 2)
    return value
