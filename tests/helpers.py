"""Shared test helpers: tool-call builders and the transcript validity check."""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

_OPENAI_MESSAGE = TypeAdapter(ChatCompletionMessageParam)


def call(id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def calls(*tool_calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(tool_calls)}


def assert_valid_conversation(messages: list[dict[str, Any]]) -> None:
    """Every message is an OpenAI SDK message param, and tool calls pair up (invariant 2)."""
    for m in messages:
        validated = _OPENAI_MESSAGE.validate_python(m)
        # pydantic checks Iterable[...] fields lazily: consume them so every item is validated.
        for key in ("tool_calls", "content"):
            value = validated.get(key)
            if value is not None and not isinstance(value, str):
                list(value)
    open_ids: set[str] = set()
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids, f"#{i} answers no open call: {m}"
            open_ids.remove(m["tool_call_id"])
            continue
        assert not open_ids, f"calls {open_ids} unanswered before #{i}"
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            assert len(set(ids)) == len(ids), f"duplicate ids in #{i}: {ids}"
            open_ids = set(ids)
    assert not open_ids, f"calls {open_ids} unanswered at the end"


def content(message: dict[str, Any]) -> Any:
    return json.loads(message["content"])
