"""The messages of a request as JSON, each message encoded once (issue 26).

A session's requests share one growing list of wire dicts (``request.messages``, see
:class:`~agentnb.models.request.Sent`): each call sends the list of the call before and the
new messages. :class:`MessagesJSON` keeps, for the lists it has seen, the messages as the
profile prepares them and their JSON (UTF-8, :mod:`agentnb._json`'s rule), and extends both by
the new messages only; a message met in another list (a fork, a windowed request) is looked
up by identity. So building a long session's next request body costs what its new messages
cost to encode, plus copying the bytes the server is sent.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ... import _json
from .profiles import Profile

__all__ = ["MessagesJSON"]


def _follow(wires: Sequence[dict[str, Any]]) -> Callable[[], Any]:
    """A weak reference to ``wires`` when it can have one (``WireList``), else a strong one."""
    try:
        return weakref.ref(wires)
    except TypeError:  # a plain list: held (it is a request's own copy anyway)
        return lambda: wires


#: Lists followed at once (the oldest is forgotten first), and messages whose JSON is kept.
LISTS = 16
MESSAGES = 200_000


class _Grown:
    """What was prepared and encoded of one growing list of wire dicts."""

    __slots__ = ("data", "kept", "pending", "prepared", "wires")

    def __init__(self, wires: Sequence[dict[str, Any]]) -> None:
        # Followed, not held: a list a client held could not grow in place (_fast.extended).
        self.wires: Callable[[], Any] = _follow(wires)
        self.prepared: list[dict[str, Any]] = []
        self.data = b"["  # the JSON array so far, without its "]" ...
        self.pending: list[bytes] = []  # ... and the pieces not joined to it yet
        self.kept = 0  # messages whose provider_data the profile left out


class MessagesJSON:
    """The prepared messages of a client's requests and their JSON, for one profile."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._lists: OrderedDict[int, _Grown] = OrderedDict()
        self._by_list: dict[int, _Grown] = {}  # id(prepared list) -> its state
        self._messages: dict[int, tuple[dict[str, Any], dict[str, Any], bytes]] = {}

    def prepared(self, wires: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages as the profile sends them: a list this encoder owns (read only)."""
        grown = self._lists.get(id(wires))
        if grown is None or grown.wires() is not wires or len(wires) < len(grown.prepared):
            grown = _Grown(wires)
            self._lists[id(wires)] = grown
            while len(self._lists) > LISTS:
                _, old = self._lists.popitem(last=False)
                self._by_list.pop(id(old.prepared), None)
            self._by_list[id(grown.prepared)] = grown
        have = len(grown.prepared)
        for wire in wires[have:]:
            prepared, data = self._message(wire)
            if "provider_data" in wire and "provider_data" not in prepared:
                grown.kept += 1
            if grown.prepared:
                grown.pending.append(b",")
            grown.prepared.append(prepared)
            grown.pending.append(data)
        return grown.prepared

    def kept(self, messages: Any) -> int:
        """How many messages of a list :meth:`prepared` returned lost their ``provider_data``
        (reasoning another API wrote, which Chat Completions cannot take back)."""
        grown = self._by_list.get(id(messages))
        return grown.kept if grown is not None and grown.prepared is messages else 0

    def encoded(self, messages: Any) -> list[bytes] | None:
        """The pieces of the JSON array of a list :meth:`prepared` returned (to be joined, as
        grown so far), else None."""
        grown = self._by_list.get(id(messages))
        if grown is None or grown.prepared is not messages:
            return None
        if grown.pending:
            grown.data += b"".join(grown.pending)
            grown.pending.clear()
        return [grown.data, b"]"]

    def _message(self, wire: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        found = self._messages.get(id(wire))
        if found is not None and found[0] is wire:
            return found[1], found[2]
        if len(self._messages) >= MESSAGES:
            self._messages.clear()
        prepared = self.profile.message(wire)
        data = _json.dumps(prepared, separators=(",", ":")).encode()
        self._messages[id(wire)] = (wire, prepared, data)
        return prepared, data
