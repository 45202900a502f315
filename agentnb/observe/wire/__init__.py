"""The three wire formats the proxy records and the stand-in serves, read into one model.

An app talks Chat Completions (``/chat/completions``), the Responses API (``/responses``) or
Anthropic Messages (``/messages``). Each format is one module with the same two sides:

* **reading** (the proxy): :meth:`Wire.read_request` turns a request body into a
  :class:`Request` - its messages in the Chat Completions shape the sessions hold
  (invariant 1), its tools, parameters and the ids the client sent; :meth:`Wire.read_reply`
  turns a whole reply into a :class:`Reply`; :meth:`Wire.stream` reads a streamed reply
  event by event (:class:`StreamReader`), giving :class:`~agentnb.models.base.Delta`\\ s as
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
    "SSEBuffer",
    "StreamReader",
    "Wire",
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


class SSEBuffer:
    """Splits the bytes of an event stream, as they arrive in any pieces, into events.

    Events end at a blank line (LF or CRLF); each is ``(event name or None, data)`` with its
    ``data:`` lines joined by ``\\n``. Comments and other fields are skipped. Only complete
    events come out; :meth:`close` gives the last one when the stream ends without a blank
    line after it.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[tuple[str | None, str]]:
        buffer = self._pending + data
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")
        *events, self._pending = buffer.split(b"\n\n")
        return [e for e in map(_event, events) if e is not None]

    def close(self) -> list[tuple[str | None, str]]:
        pending, self._pending = self._pending, b""
        event = _event(pending) if pending.strip() else None
        return [] if event is None else [event]


def _event(raw: bytes) -> tuple[str | None, str] | None:
    name: str | None = None
    data: list[str] = []
    for line in raw.decode("utf-8", "replace").split("\n"):
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "data":
            data.append(value)
        elif key == "event":
            name = value
    return (name, "\n".join(data)) if data else None


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
