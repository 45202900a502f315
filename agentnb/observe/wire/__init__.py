"""The three wire formats the proxy records and the stand-in serves, read into one model.

An app talks Chat Completions (``/chat/completions``), the Responses API (``/responses``) or
Anthropic Messages (``/messages``). Each format is one module with the same two sides:

* **reading** (the proxy): :meth:`Wire.read_request` turns a request body into a
  :class:`Request` - its messages in the Chat Completions shape the sessions hold
  (invariant 1), its tools, parameters and the ids the client sent; :meth:`Wire.read_reply`
  turns a whole reply into a :class:`Reply`; :meth:`Wire.stream` reads a streamed reply
  event by event (:class:`StreamReader`; the events framed by the one SSE framer,
  :class:`agentnb.models.sse.SSEFramer`), giving :class:`~agentnb.models.base.Delta`\\ s as
  they arrive and the :class:`Reply` at the end;
* **writing** (the stand-in, :mod:`agentnb.observe.standin`): :meth:`Wire.render` and
  :meth:`Wire.render_stream` write an agentnb reply as that format's body or events, and
  :meth:`Wire.error` an error body the format's SDKs understand.

The conversions are deterministic and symmetric: a reply read here and the same turn
re-sent by the app in its next request become equal messages, so threading compares them.
Nothing is dropped: a block or item with no Chat Completions equivalent is kept verbatim as
a content part (or an extra field) of the message it came with.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from ...models import Delta, ModelResponse, Usage
from .base import Reply, Request, new_id, sse

__all__ = [
    "WIRES",
    "Reply",
    "Request",
    "StreamReader",
    "Wire",
    "named_tools",
    "new_id",
    "sse",
    "wire_for",
]


class StreamReader(Protocol):
    """Reads one streamed reply, event by event."""

    #: True once the format's last event came (``[DONE]``, ``response.completed``,
    #: ``message_stop``): a stream that ends before it broke off.
    done: bool

    def feed(self, event: str | None, data: str) -> list[Delta]:
        """One SSE event (its ``event:`` name, if any, and its ``data``): the deltas in it.
        Raises ValueError for an error event or data that is not the format's."""
        ...

    def reply(self) -> Reply:
        """The reply assembled so far (call once ``done``)."""
        ...


class Wire(Protocol):
    """One wire format, both ways (see the module docstring)."""

    #: ``chat``, ``responses`` or ``anthropic``.
    name: str
    #: The path ending that speaks it.
    path: str
    #: ``gen_ai.provider.name`` of calls in this format (OpenTelemetry GenAI conventions).
    provider: str

    def read_request(self, body: dict[str, Any]) -> Request: ...

    def read_reply(self, data: dict[str, Any]) -> Reply: ...

    def stream(self) -> StreamReader: ...

    def render(self, response: ModelResponse, request: Request, usage: Usage) -> dict[str, Any]: ...

    def render_stream(
        self, response: ModelResponse, request: Request, usage: Usage
    ) -> Iterator[bytes]: ...

    def error(self, message: str, kind: str) -> dict[str, Any]: ...

    def error_event(self, message: str, kind: str) -> bytes: ...


def named_tools(messages: list[dict[str, Any]], start: int = 0) -> list[dict[str, Any]]:
    """``messages[start:]`` with each ``tool`` message that has no ``name`` given the name
    the call it answers has in an earlier assistant message (the formats' tool results carry
    only the call's id; a session's tool messages name their tool, as the runtime's do)."""
    names: dict[str, str] = {}
    out = []
    for i, message in enumerate(messages):
        for call in message.get("tool_calls") or () if message.get("role") == "assistant" else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names[str(call.get("id") or "")] = function["name"]
        if i < start:
            continue
        name = names.get(str(message.get("tool_call_id") or ""))
        if message.get("role") == "tool" and not message.get("name") and name:
            message = {**message, "name": name}
        out.append(message)
    return out


def _wires() -> dict[str, Wire]:
    from .anthropic import ANTHROPIC
    from .chat import CHAT
    from .responses import RESPONSES

    return {w.name: w for w in (CHAT, RESPONSES, ANTHROPIC)}


#: The formats by name: ``chat``, ``responses``, ``anthropic``.
WIRES: dict[str, Wire] = _wires()


def wire_for(path: str) -> Wire | None:
    """The format a POST to ``path`` speaks, or None (passed through unrecorded)."""
    for wire in WIRES.values():
        if path.endswith(wire.path):
            return wire
    return None
