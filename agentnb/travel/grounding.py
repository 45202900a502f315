"""Is an answer grounded in its tool results? A check for fabrication and ignored results.

The runtime cannot know what is true, but it can compare: every flight number and every
amount in the final answer should appear in a tool result or in what the user said.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["ungrounded_claims"]

_FLIGHT = re.compile(r"\b([A-Z][A-Z0-9]\d{3,4})\b")
_AMOUNT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(?:元|CNY|yuan)")


def _numbers(value: Any, out: set[float]) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        out.add(abs(float(value)))
    elif isinstance(value, dict):
        for v in value.values():
            _numbers(v, out)
    elif isinstance(value, list):
        for v in value:
            _numbers(v, out)


def ungrounded_claims(messages: Iterable[Any]) -> list[str]:
    """Claims in the last assistant answer that no tool result or user message supports.

    ``messages`` may be a session, a list of message objects or of OpenAI dicts.
    """
    items = getattr(messages, "messages", messages)  # a Session or a RunResult
    wires = [m.wire() if hasattr(m, "wire") else m for m in items]
    answers = [m for m in wires if m.get("role") == "assistant" and m.get("content")]
    if not answers:
        return []
    answer = str(answers[-1]["content"])
    evidence = " ".join(
        str(m.get("content") or "") for m in wires if m.get("role") in ("tool", "user")
    )
    numbers: set[float] = set()
    for m in wires:
        if m.get("role") == "tool":
            with contextlib.suppress(ValueError):
                _numbers(json.loads(m.get("content") or ""), numbers)
        elif m.get("role") == "user":
            numbers |= {float(n) for n in re.findall(r"\d+(?:\.\d+)?", str(m.get("content")))}
    claims = []
    for flight in dict.fromkeys(_FLIGHT.findall(answer)):
        if flight not in evidence:
            claims.append(f"flight {flight} appears in no tool result")
    for amount in dict.fromkeys(_AMOUNT.findall(answer)):
        if float(amount.replace(",", "")) not in numbers:
            claims.append(f"amount {amount} appears in no tool result")
    return claims
