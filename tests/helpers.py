"""Shared test helpers: tool-call builders and the transcript validity check."""

from __future__ import annotations

import json
from typing import Any

from agentnb.testing import assert_valid_conversation  # one check: the public one

__all__ = ["WEATHER", "assert_valid_conversation", "call", "calls", "content"]

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
