"""What every wire format reads into and writes with: :class:`Request`, :class:`Reply`, and
the helpers of the stand-in's side (:func:`new_id`, :func:`sse`). Re-exported by the package,
which also names the formats: each format imports this module, never the package.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..response import Usage

__all__ = ["KEPT", "Reply", "Request", "fold_thinking", "kept", "new_id", "sse"]

#: The assistant message's field holding what its API needs back exactly as it came: the
#: opaque part of its reasoning (Anthropic's thinking blocks with their ``signature``,
#: ``redacted_thinking`` blocks; the Responses API's reasoning items with their ``id`` and
#: ``encrypted_content``), under the API's name: ``{"api": "anthropic", "reasoning": [...]}``
#: (and, from :class:`~agentnb.models.ResponsesModel`, the ``response_id`` that answered).
#: The readable part is the message's ``reasoning_content``, whatever the API.
KEPT = "provider_data"


def kept(message: Any, api: str) -> list[dict[str, Any]] | None:
    """The reasoning blocks or items ``message`` keeps for ``api`` (None: none for it)."""
    data = message.get(KEPT) if isinstance(message, dict) else None
    if not isinstance(data, dict) or data.get("api") != api:
        return None
    found = data.get("reasoning")
    return [dict(b) for b in found if isinstance(b, dict)] if isinstance(found, list) else None


@dataclass(slots=True)
class Request:
    """A request as the proxy reads it, whatever format it came in."""

    api: str
    model: str
    #: The messages it carries, in the Chat Completions shape (with ``previous_response_id``
    #: or ``conversation``: only the new ones; the upstream holds the rest).
    messages: list[dict[str, Any]]
    #: Tool schemas in the Chat Completions shape (``{"type": "function", "function": ...}``).
    tools: list[dict[str, Any]] = field(default_factory=list)
    #: Everything else the app set, under the format's own names (temperature, max_tokens...).
    params: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    #: Responses API: the response this request continues, and the upstream conversation.
    previous_response_id: str | None = None
    conversation: str | None = None
    #: Responses API ``store``: False means the upstream keeps nothing to continue from.
    store: bool = True
    #: Body fields that name the conversation's session (``metadata.session_id``, ...).
    ids: list[str] = field(default_factory=list)
    #: ``prompt_cache_key`` (Chat Completions, Responses): groups an app's conversations.
    cache_key: str | None = None


@dataclass(slots=True)
class Reply:
    """A reply as the proxy reads it: the assistant message (Chat Completions shape)."""

    message: dict[str, Any]
    usage: Usage | None = None
    finish_reason: str | None = None
    id: str | None = None
    model: str | None = None


#: A message that is only reasoning re-sent as tagged text (pydantic-ai's unsigned thinking).
_THINKING_MESSAGE = re.compile(r"\s*<(assistant_thinking|thinking|think)>(.*?)</\1>\s*", re.S)


def fold_thinking(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with each user message that is only ``<assistant_thinking>`` (or
    ``<think>``) text folded into the assistant turn it belongs to (the one after it, else
    the one before): its text becomes that turn's ``reasoning_content`` (when it has none)
    and ``reasoning_resent_as`` says it came as a user message. A client keeps unsigned
    reasoning this way; read as a turn of its own it would shift every later message."""
    out: list[dict[str, Any]] = []
    pending: str | None = None
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else None
        if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
            text = content[0].get("text") if content[0].get("type") == "text" else None
        found = (
            _THINKING_MESSAGE.fullmatch(text) if message.get("role") == "user" and text else None
        )
        if found is None:
            if pending is not None and message.get("role") == "assistant":
                message, pending = _with_reasoning(message, pending), None
            elif pending is not None:
                out.append(_as_user(pending))
                pending = None
            out.append(message)
        elif (
            out and out[-1].get("role") == "assistant" and out[-1].get("reasoning_content") is None
        ):
            out[-1] = _with_reasoning(out[-1], found.group(2).strip())
        else:
            pending = found.group(2).strip()
    if pending is not None:
        out.append(_as_user(pending))
    return out


def _with_reasoning(message: dict[str, Any], text: str) -> dict[str, Any]:
    if message.get("reasoning_content"):
        return message
    return {**message, "reasoning_content": text, "reasoning_resent_as": "user message"}


def _as_user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": f"<assistant_thinking>{text}</assistant_thinking>"}


def new_id(prefix: str) -> str:
    return f"{prefix}{os.urandom(12).hex()}"


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: ``event: name`` (when given) and one ``data:`` line of JSON."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()
