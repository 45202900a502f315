"""Accepting the OpenAI SDK's own shapes on the way in.

A reply dumped with ``ChatCompletionMessage.model_dump()`` carries nulls (``tool_calls: None``,
``audio: None``, ``function_call: None``, ``refusal: None``) and response-only fields
(``annotations``, the full ``audio`` object) that the SDK's *request* types refuse. Stored as
they are, the next request would fail; so they are normalised when a message is parsed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["normalise_assistant"]

#: Fields a request must not carry when they are null.
_NULLABLE = frozenset(
    ("tool_calls", "audio", "function_call", "refusal", "name", "reasoning_content")
)
_SUSPECT = _NULLABLE | {"annotations"}


def normalise_assistant(value: dict[str, Any]) -> dict[str, Any]:
    """Accept the SDK's ``model_dump()`` of a reply: drop nulls and response-only fields."""
    if _SUSPECT.isdisjoint(value):
        return value  # the common case, checked in one call
    out = {k: v for k, v in value.items() if not (k in _NULLABLE and v is None)}
    out.pop("annotations", None)
    audio = out.get("audio")
    if isinstance(audio, dict) and set(audio) - {"id"}:
        out["audio"] = {"id": audio.get("id")}
    return out
