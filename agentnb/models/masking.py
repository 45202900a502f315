"""Masking the text a stream carries across its events (invariant 6).

A stream carries text across events: a reply's text, reasoning and a call's arguments come a
few characters per event, so a credential echoed back arrives in pieces no event holds
whole. :class:`StreamMask` masks that text: every string value of an event's JSON belongs
to a *channel* (its path in the JSON, with the event's name and the ``index`` /
``output_index`` / ``content_index`` / ``item_id`` that tell parallel parts apart), each
channel's text is searched as one text, and an event is held back while the text of one of
its streamed channels (:data:`STREAMED`: text, reasoning, arguments) ends in what could be
the start of a credential (a window as long as the longest registered form) and that channel
goes on (a channel has ended once no event extended it in :data:`PATIENCE` events, and
every channel once an event carries no streamed text: a finish, a block's stop). A
credential split over events is masked in every event that carries a piece of it: the
first keeps ``***``, the others lose their piece, so the joined text reads ``***``.
:func:`mask_stream` does the same to a whole recorded stream (a call's response, a
cassette's body), keeping every event it does not change byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .._secrets import MASK, Secrets
from .sse import SSEEvent, SSEFramer, render

__all__ = ["PATIENCE", "STREAMED", "StreamMask", "carried_text", "mask_stream"]

#: Keys whose values tell parallel parts of a stream apart (a tool call's index, the item
#: and content part of a Responses output, an Anthropic content block).
_PARTS = ("index", "output_index", "content_index", "item_id")
#: Keys whose strings a stream carries a few characters per event (the text, reasoning and
#: arguments of Chat Completions, the Responses API and Anthropic Messages): the channels a
#: credential can be split over, so the ones an event is held back for.
STREAMED = frozenset(
    ("content", "text", "delta", "arguments", "partial_json", "reasoning_content",
     "reasoning", "thinking", "refusal")
)  # fmt: skip
#: A channel no event extended for this many events has ended: it holds nothing back.
PATIENCE = 8

Place = list[Any]  # [the dict or list holding a string, its key or index]


def _strings(value: Any, path: tuple[Any, ...], out: list[tuple[tuple[Any, ...], Place]]) -> None:
    """Every string in ``value`` as (its channel, its place), in document order (a stack, not
    recursion: any depth)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            parts = tuple(item[k] for k in _PARTS if isinstance(item.get(k), int | str))
            pairs: Iterable[tuple[Any, Any]] = item.items()
        elif isinstance(item, list):  # its items share a channel (tell them apart by _PARTS)
            parts, pairs = (), enumerate(item)
        else:
            continue
        inner = []
        for key, child in pairs:
            channel = (*where, parts, key if isinstance(item, dict) else "[]")
            if isinstance(child, str):
                out.append((channel, [item, key]))
            elif isinstance(child, dict | list):
                inner.append((child, channel))
        stack.extend(reversed(inner))


def _parsed(event: SSEEvent) -> tuple[Any, list[tuple[tuple[Any, ...], Place]]]:
    """An event's data (a plain-text one as ``{"data": text}``) and its strings."""
    try:
        data: Any = json.loads(event.data)
    except (ValueError, RecursionError):  # not JSON (or too deep to read): plain text
        data = {"data": event.data}
    found: list[tuple[tuple[Any, ...], Place]] = []
    _strings(data, (event.name,), found)
    return data, found


class _Held:
    """An event waiting: its data and each string's (channel, place, begin, end)."""

    __slots__ = ("data", "event", "pieces")

    def __init__(self, event: SSEEvent, data: Any, pieces: list[Any]) -> None:
        self.event, self.data, self.pieces = event, data, pieces


class _Channel:
    """One channel's text from ``start`` on (offsets count from the channel's beginning)."""

    __slots__ = ("masked", "start", "streamed", "text", "touched")

    def __init__(self, streamed: bool) -> None:
        self.text = ""
        self.start = 0
        self.masked: list[tuple[int, int]] = []  # spans of credentials, sorted
        self.streamed = streamed
        self.touched = 0  # the number of the event that last extended it


class StreamMask:
    """Masks the credentials of ``secrets`` in the text events carry across them (see the
    module docstring). :meth:`feed` an event, get back the events safe to release, in order;
    :meth:`close` releases the rest."""

    def __init__(self, secrets: Secrets) -> None:
        self.forms = secrets.forms
        self._longest = max((len(f) for f in self.forms), default=0)
        self._prefixes = {f[:i] for f in self.forms for i in range(1, len(f))}
        self._firsts = {f[0] for f in self.forms}
        self._held: list[_Held] = []
        self._channels: dict[tuple[Any, ...], _Channel] = {}
        self._count = 0

    def feed(self, event: SSEEvent) -> list[SSEEvent]:
        if not self.forms:
            return [event]
        self._count += 1
        data, found = _parsed(event)
        pieces: list[Any] = []
        before: dict[tuple[Any, ...], int] = {}
        for key, place in found:
            channel = self._channels.get(key)
            if channel is None:
                channel = self._channels[key] = _Channel(key[-1] in STREAMED)
            before.setdefault(key, len(channel.text))
            text = place[0][place[1]]
            begin = channel.start + len(channel.text)
            channel.text += text
            channel.touched = self._count
            pieces.append((key, place, begin, begin + len(text)))
        for key, length in before.items():
            self._search(self._channels[key], length)
        if not any(self._channels[key].streamed for key in before):  # a finish, a stop
            for channel in self._channels.values():
                channel.touched = -PATIENCE  # every part has ended: nothing holds
        self._held.append(_Held(event, data, pieces))
        return self._release(final=False)

    def _search(self, channel: _Channel, old: int) -> None:
        """Add the credentials ``channel``'s new text completed (those ending past ``old``)."""
        text, since = channel.text, max(0, old - self._longest + 1)
        for form in self.forms:
            at = text.find(form, since)
            while at >= 0:
                span = (channel.start + at, channel.start + at + len(form))
                if span not in channel.masked:
                    channel.masked.append(span)
                at = text.find(form, at + 1)
        channel.masked.sort()

    def _hold(self, channel: _Channel) -> int:
        """The offset from which ``channel``'s text may be the start of a credential still
        to come (its end when none, or when the channel has ended)."""
        text, end = channel.text, channel.start + len(channel.text)
        if not channel.streamed or self._count - channel.touched >= PATIENCE:
            return end
        for at in range(max(0, len(text) - self._longest + 1), len(text)):
            if text[at] in self._firsts and text[at:] in self._prefixes:
                return channel.start + at
        return end

    def _release(self, final: bool) -> list[SSEEvent]:
        holds: dict[tuple[Any, ...], int] = {}
        out = []
        while self._held:
            first = self._held[0]
            if not final:
                for key, *_ in first.pieces:
                    if key not in holds:
                        holds[key] = self._hold(self._channels[key])
                if any(end > holds[key] for key, _, _, end in first.pieces):
                    break
            self._held.pop(0)
            out.append(self._masked(first))
        self._trim()
        return out

    def _masked(self, held: _Held) -> SSEEvent:
        changed = False
        for key, place, begin, end in held.pieces:
            spans = _merged(s for s in self._channels[key].masked if s[0] < end and begin < s[1])
            if not spans:
                continue
            text, parts, at = place[0][place[1]], [], begin
            for a, b in spans:
                parts.append(text[at - begin : max(a, at) - begin])
                if a >= begin:
                    parts.append(MASK)
                at = min(max(b, at), end)
            parts.append(text[at - begin :])
            place[0][place[1]] = "".join(parts)
            changed = True
        if not changed:
            return held.event
        data = held.data
        text = data["data"] if list(data) == ["data"] and not _is_json(held.event.data) else (
            json.dumps(data, ensure_ascii=False))  # fmt: skip
        return SSEEvent(held.event.name, text, render(held.event.name, text))

    def _trim(self) -> None:
        """Forget the text of released events, but the last ``longest`` characters."""
        low: dict[tuple[Any, ...], int] = {}
        for held in self._held:
            for key, _, begin, _ in held.pieces:
                low.setdefault(key, begin)
        for key, channel in self._channels.items():
            end = channel.start + len(channel.text)
            cut = min(low.get(key, end), end - self._longest)
            if cut > channel.start:
                channel.text = channel.text[cut - channel.start :]
                channel.start = cut
                channel.masked = [s for s in channel.masked if s[1] > cut]

    def close(self) -> list[SSEEvent]:
        """Release every event still held (the stream ended)."""
        return self._release(final=True)


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def mask_stream(body: bytes, secrets: Secrets) -> str:
    """A whole recorded event stream with the credentials it carries masked, across events
    too (:class:`StreamMask`); what it does not change stays byte for byte, and then
    :meth:`Secrets.mask` is applied to the whole text (a key whole in one line, a comment)."""
    framer, mask = SSEFramer(), StreamMask(secrets)
    events = framer.feed(body)
    rest = framer.rest
    last = framer.close()
    parts = [e.raw for event in events + last for e in mask.feed(event)]
    parts += [e.raw for e in mask.close()]
    if not last:
        parts.append(rest)  # a line left unfinished, a comment: as it came
    return secrets.mask(b"".join(parts).decode("utf-8", "replace"))


def carried_text(events: Iterable[SSEEvent]) -> str:
    """The text ``events`` carry, each channel's strings joined (a line per channel): what a
    client that reassembles the stream reads."""
    channels: dict[tuple[Any, ...], list[str]] = {}
    for event in events:
        for key, place in _parsed(event)[1]:
            channels.setdefault(key, []).append(place[0][place[1]])
    return "\n".join("".join(texts) for texts in channels.values())
