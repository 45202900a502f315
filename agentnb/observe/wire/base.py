"""What every wire format reads into and writes with: :class:`Request`, :class:`Reply`, and
the helpers of the stand-in's side (:func:`new_id`, :func:`sse`). Re-exported by the package,
which also names the formats: each format imports this module, never the package.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ...models import Usage

__all__ = ["Reply", "Request", "new_id", "sse"]


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


def new_id(prefix: str) -> str:
    return f"{prefix}{os.urandom(12).hex()}"


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: ``event: name`` (when given) and one ``data:`` line of JSON."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()
