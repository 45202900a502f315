"""Server-sent events: the one framer.

:class:`SSEFramer` turns the bytes of an event stream, as they arrive in any pieces, into
:class:`SSEEvent`\\ s: lines end at CR, LF or CRLF, an event at a blank line; ``data:`` lines
are joined by ``\\n``, ``event:`` names it, comments and other fields are skipped. Each byte
is looked at once and moved at most once, so a stream costs time linear in its length
however it is cut (one 30 MB event in 16 KB pieces included). The model client
(:mod:`agentnb.models.openai.sse`) and the recording proxy (:mod:`agentnb.observe.relay`)
both read streams through it.

What a stream carries across its events is masked by :mod:`agentnb.models.masking`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["SSEEvent", "SSEFramer", "render"]


class SSEEvent(NamedTuple):
    """One event: its ``event:`` name (or None), its data, and its bytes as they came."""

    name: str | None
    data: str
    raw: bytes


_EOL = re.compile(rb"\r\n?|\n")


class SSEFramer:
    """Splits the bytes of an event stream, in any pieces, into events (see the module
    docstring). :meth:`close` gives the last event when the stream ends without a blank
    line after it; :attr:`rest` is what is not framed yet (an unfinished event)."""

    __slots__ = ("_buffer", "_data", "_line", "_name", "_scan")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scan = 0  # where the search for the next line end goes on
        self._line = 0  # where the current line starts
        self._name: str | None = None
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buffer = self._buffer
        buffer += chunk
        size, events, done = len(buffer), [], 0  # done: where the last event ended
        line, scan = self._line, size
        for end in _EOL.finditer(buffer, self._scan):
            if end.end() == size and end.group() == b"\r":
                scan = end.start()  # a CR last: the LF of a CRLF may be in the next piece
                break
            text = bytes(buffer[line : end.start()])
            line = end.end()
            if text:
                self._field(text)
            elif self._data:  # a blank line ends an event
                events.append(self._event(bytes(buffer[done:line])))
                done = line
            else:
                self._name = None
        if done:  # once per piece: each byte is moved at most once
            del buffer[:done]
        self._line, self._scan = line - done, max(scan, line) - done
        return events

    def _field(self, line: bytes) -> None:
        key, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if key == b"data":
            self._data.append(value)
        elif key == b"event":
            self._name = value.decode("utf-8", "replace")

    def _event(self, raw: bytes) -> SSEEvent:
        data = b"\n".join(self._data).decode("utf-8", "replace")
        name, self._name, self._data = self._name, None, []
        return SSEEvent(name, data, raw)

    def close(self) -> list[SSEEvent]:
        """The last event (no blank line after it), if the stream ended inside one."""
        tail = bytes(self._buffer[self._line :]).rstrip(b"\r\n")
        if tail:
            self._field(tail)
        events = [self._event(bytes(self._buffer))] if self._data else []
        self._buffer, self._scan, self._line = bytearray(), 0, 0
        return events

    @property
    def rest(self) -> bytes:
        return bytes(self._buffer)


def render(name: str | None, data: str) -> bytes:
    """An event's bytes: ``event:`` (when named) and one ``data:`` line per line of data."""
    head = f"event: {name}\n" if name else ""
    return (head + "".join(f"data: {line}\n" for line in data.split("\n")) + "\n").encode()
