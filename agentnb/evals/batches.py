"""A run's trajectory as reply batches: each assistant reply's tool calls, with their results.

Checks and diffs read trajectories as batches, not as flattened spans: calls made in one
reply (in parallel) stay together. ``batches(messages)`` reads any list of message objects
or OpenAI dicts (a run's ``result.messages``, a session's ``messages``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .normalise import canonical

__all__ = ["PairedCall", "batches", "calls"]


@dataclass(frozen=True, slots=True)
class PairedCall:
    """One tool call of a trajectory, with the result it got (``None`` if unanswered)."""

    name: str
    arguments: str  # the raw JSON text the model sent
    id: str
    batch: int  # which reply (0-based, counting replies that called tools)
    result: str | None = None
    kind: str | None = None  # the result's error kind (None: ok or unanswered)

    @property
    def args(self) -> dict[str, Any]:
        """The arguments as a dict (``{}`` when they are not a JSON object)."""
        try:
            value = json.loads(self.arguments) if self.arguments.strip() else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def key(self) -> tuple[str, str]:
        """``(name, canonical arguments)``: what recordings and alignment compare."""
        return self.name, canonical(self.arguments)

    def __str__(self) -> str:
        return f"{self.name}({self.arguments})"


def _wire(message: Any) -> dict[str, Any]:
    return message if isinstance(message, dict) else message.wire()


def batches(messages: Iterable[Any]) -> list[list[PairedCall]]:
    """The tool calls of ``messages``, one list per assistant reply that made any."""
    wires = [_wire(m) for m in messages]
    results: dict[str, tuple[str, str | None]] = {}
    for m in wires:
        if m.get("role") == "tool":
            content = m.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            results[str(m.get("tool_call_id"))] = (text, _kind(text))
    out: list[list[PairedCall]] = []
    for m in wires:
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            continue
        batch = []
        for c in m["tool_calls"]:
            fn = c.get("function") or {}
            result, kind = results.get(str(c.get("id")), (None, None))
            args = fn.get("arguments")
            raw = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
            batch.append(
                PairedCall(str(fn.get("name")), raw, str(c.get("id")), len(out), result, kind)
            )
        out.append(batch)
    return out


def calls(messages: Iterable[Any]) -> list[PairedCall]:
    """Every tool call of ``messages``, flattened in order."""
    return [c for batch in batches(messages) for c in batch]


def _kind(text: str) -> str | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict) and value.get("ok") is False:
        return str(value.get("kind") or "tool_error")
    return None
