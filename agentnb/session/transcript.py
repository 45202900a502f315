"""The transcript: messages, their cached wire dicts, token counts and tool-call pairing.

Every change is atomic: a message that fails validation or cannot be serialised raises
:class:`~agentnb.errors.InvalidMessage` and nothing changes. Appends extend the current lists;
a rewrite (replace, delete, truncate, repair) builds *new* lists, so a request recorded by
reference to an older list (``ModelRequest`` of an earlier model call) still rebuilds exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, overload

from ..errors import InvalidMessage
from ..messages import AssistantMessage, Message, ToolCall, ToolMessage, parse_message
from ..tools.tool import error_content
from .pairing import Pairing, Problem, open_problems

__all__ = ["MessageList", "Transcript"]


class MessageList(Sequence[Message]):
    """A read-only view of a session's messages (edits go through the session)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[Message]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._items)

    def _readonly(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "session.messages is read-only; use session.append(message), "
            "session.replace(index, message), session.delete(index) or session.truncate(n)"
        )

    __setitem__ = __delitem__ = _readonly
    append = extend = insert = pop = remove = clear = _readonly

    def __eq__(self, other: object) -> bool:
        return list(self._items) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return "[" + ",\n ".join(repr(m) for m in self._items) + "]"


def checked(value: Message | dict[str, Any], where: str) -> Message:
    """Parse a message and prove its wire form serialises, before anything is changed."""
    message = parse_message(value, where=where)
    try:
        json.dumps(message.wire(), ensure_ascii=False, allow_nan=False)
    except Exception as exc:  # pydantic's serialisation errors, TypeError, NaN's ValueError
        message.__dict__.pop("_wire_cache", None)
        raise InvalidMessage(f"{where} cannot be sent as JSON: {exc}") from None
    return message


class Transcript:
    """Messages in OpenAI shape with their wire cache, token total and pairing state."""

    __slots__ = ("_pairing", "messages", "rewrites", "tokens", "wires")

    def __init__(self) -> None:
        #: The messages (read only: a rewrite replaces the list, request records share it).
        self.messages: list[Message] = []
        #: The cached wire dicts, parallel to ``messages`` (read only).
        self.wires: list[dict[str, Any]] = []
        #: Estimated tokens of the whole history (the heuristic of :mod:`agentnb.tokens`).
        self.tokens = 0
        self._pairing = Pairing()
        #: Bumped by every change; a store commits against it.
        #: Bumped by every change that is not an append (the history was rewritten).
        self.rewrites = 0

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.messages)

    @property
    def is_valid(self) -> bool:
        return not self._pairing.problems and not self._pairing.open

    @property
    def open_at(self) -> int | None:
        """Index of the assistant message whose calls still wait for results, if any."""
        return self._pairing.open_at if self._pairing.open else None

    @property
    def open_ids(self) -> dict[str, str]:
        return dict(self._pairing.open)

    def open_calls(self) -> list[ToolCall]:
        """The calls of the last assistant message that still wait for a result, in order."""
        pairing = self._pairing
        if not pairing.open:
            return []
        message = self.messages[pairing.open_at]
        assert isinstance(message, AssistantMessage) and message.tool_calls
        return [c for c in message.tool_calls if c.id in pairing.open]

    def problems(self) -> list[Problem]:
        """The pairing problems, kept up to date on every change (no rescan)."""
        return open_problems(self._pairing)

    def add(self, message: Message) -> int:
        """Append a message the runtime built (already valid). Returns its index."""
        index = len(self.messages)
        wire = message.wire()
        self.messages.append(message)
        self.wires.append(wire)
        self._pairing.feed(index, message)
        self.tokens += message.tokens
        return index

    def append(self, value: Message | dict[str, Any]) -> tuple[int, Message]:
        message = checked(value, f"message #{len(self.messages)}")
        return self.add(message), message

    def rewrite(self, messages: list[Message]) -> None:
        """Replace the whole history with ``messages`` (new lists; old records stay exact)."""
        pairing = Pairing()
        tokens = 0
        wires = []
        for i, m in enumerate(messages):
            pairing.feed(i, m)
            tokens += m.tokens
            wires.append(m.wire())
        self.messages, self.wires, self._pairing, self.tokens = messages, wires, pairing, tokens
        self.rewrites += 1

    def replaced(self, index: int, value: Message | dict[str, Any]) -> list[Message]:
        index = range(len(self.messages))[index]
        new = list(self.messages)
        new[index] = checked(value, f"message #{index}")
        return new

    def repaired(self, note: str) -> tuple[list[Message], int]:
        """The messages with every unanswered call answered and orphan results dropped,
        and how many messages that added or removed."""
        fixed: list[Message] = []
        pairing = Pairing()
        changes = 0

        def close() -> None:
            nonlocal changes
            for call_id, name in list(pairing.open.items()):
                msg = ToolMessage.answer(
                    call_id,
                    name,
                    error_content(
                        note,
                        "the call was never executed; do not assume a result",
                        kind="not_executed",
                    ),
                )
                pairing.feed(len(fixed), msg)
                fixed.append(msg)
                changes += 1

        for m in self.messages:
            if isinstance(m, ToolMessage):
                if m.tool_call_id not in pairing.open:
                    changes += 1
                    continue
            elif pairing.open:
                close()
            pairing.feed(len(fixed), m)
            fixed.append(m)
        close()
        return fixed, changes
