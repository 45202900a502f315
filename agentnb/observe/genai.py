"""The GenAI conventions' vocabulary agentnb writes: the parts format, parameters, a table.

See open-telemetry/semantic-conventions-genai (``model/gen-ai/spans.yaml`` and the
``gen-ai-input-messages.json`` / ``gen-ai-output-messages.json`` schemas).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..tokens import content_text

__all__ = ["PARAMS", "SCHEMA_URL", "dump", "ns", "parts", "span_table"]

#: The semantic-conventions release whose GenAI vocabulary these spans use
#: (``gen_ai.provider.name``, ``gen_ai.input.messages`` in the parts format).
SCHEMA_URL = "https://opentelemetry.io/schemas/1.37.0"
PARAMS = {
    "temperature": ("gen_ai.request.temperature", float),
    "top_p": ("gen_ai.request.top_p", float),
    "top_k": ("gen_ai.request.top_k", float),
    "max_tokens": ("gen_ai.request.max_tokens", int),
    "max_completion_tokens": ("gen_ai.request.max_tokens", int),
    "max_output_tokens": ("gen_ai.request.max_tokens", int),  # the Responses API's name
    "frequency_penalty": ("gen_ai.request.frequency_penalty", float),
    "presence_penalty": ("gen_ai.request.presence_penalty", float),
    "seed": ("gen_ai.request.seed", int),
    "n": ("gen_ai.request.choice.count", int),
}


def ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parts(message: Mapping[str, Any]) -> dict[str, Any]:
    """One Chat Completions message in the conventions' parts format."""
    role = message.get("role")
    out: list[dict[str, Any]] = []
    if role == "tool":
        out.append(
            {
                "type": "tool_call_response",
                "id": message.get("tool_call_id"),
                "response": content_text(message.get("content")),
            }
        )
    else:
        text = content_text(message.get("content"))
        if text:
            out.append({"type": "text", "content": text})
        reasoning = message.get("reasoning_content")
        if reasoning:
            out.append({"type": "reasoning", "content": str(reasoning)})
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            out.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": _arguments(function.get("arguments") or ""),
                }
            )
    return {"role": "system" if role == "developer" else role, "parts": out}


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def span_table(spans: Sequence[Any]) -> Any:
    """Finished spans as a pandas DataFrame: name, parent, duration, the gen_ai attributes."""
    import pandas as pd

    names = {s.context.span_id: s.name for s in spans}
    rows = []
    for s in sorted(spans, key=lambda s: s.start_time or 0):
        row: dict[str, Any] = {
            "span": s.name,
            "parent": names.get(s.parent.span_id) if s.parent else None,
            "ms": round(((s.end_time or 0) - (s.start_time or 0)) / 1e6, 2),
            "status": s.status.status_code.name,
        }
        for key, value in (s.attributes or {}).items():
            if key.startswith(("gen_ai.", "error.")) and not key.endswith("messages"):
                row[key.removeprefix("gen_ai.")] = value
        rows.append(row)
    return pd.DataFrame(rows)
