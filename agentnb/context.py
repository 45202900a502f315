"""Context policies: which part of the history goes into a request (``assemble``, 002 §2.2).

A :class:`ContextPolicy` looks at the history and the token :class:`Budget` and returns a
:class:`Selection`: the spans of the history it keeps, in order, and any messages it inserts
after the instructions (a summary, retrieved memory). Policies work on *turn groups*
(:func:`turn_groups`): an assistant message with tool calls and the tool messages answering it
are one group, so a policy can never separate a call from its results.

:class:`KeepAll` is the default. :class:`DropOldest` drops whole groups from the oldest until
the history fits, always keeping the newest user message and everything after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .messages import AssistantMessage, Message, ToolMessage, UserMessage

__all__ = ["Budget", "ContextPolicy", "DropOldest", "KeepAll", "Selection", "turn_groups"]


@dataclass(frozen=True, slots=True)
class Budget:
    """Tokens of one request: the window and reserve (when set) and what each part costs."""

    instructions: int
    tools: int
    history: int
    context_window: int | None = None
    reply_reserve: int = 0

    @property
    def for_history(self) -> int | None:
        """Tokens the history may use, or None when no window is set."""
        if self.context_window is None:
            return None
        return self.context_window - self.reply_reserve - self.instructions - self.tools


@dataclass(frozen=True, slots=True)
class Selection:
    """What a policy keeps: ``spans`` of history indices, plus messages it inserts."""

    spans: tuple[tuple[int, int], ...]
    inserted: tuple[dict[str, Any], ...] = ()
    dropped: tuple[tuple[int, int], ...] = ()
    summarised: tuple[tuple[int, int], ...] = ()
    note: str = ""

    @classmethod
    def everything(cls, n: int) -> Selection:
        return cls(((0, n),) if n else ())


@runtime_checkable
class ContextPolicy(Protocol):
    name: str

    def select(self, history: Sequence[Message], budget: Budget) -> Selection: ...


def turn_groups(history: Sequence[Message]) -> list[tuple[int, int]]:
    """Half-open index ranges that must stay together: a call with its results, else one."""
    groups: list[tuple[int, int]] = []
    i, n = 0, len(history)
    while i < n:
        j = i + 1
        message = history[i]
        if isinstance(message, AssistantMessage) and message.tool_calls:
            while j < n and isinstance(history[j], ToolMessage):
                j += 1
        groups.append((i, j))
        i = j
    return groups


class KeepAll:
    """Send the whole history (the default without a context window)."""

    name = "keep_all"

    def select(self, history: Sequence[Message], budget: Budget) -> Selection:
        return Selection.everything(len(history))

    def __repr__(self) -> str:
        return "KeepAll()"


class DropOldest:
    """Drop the oldest turn groups until the history fits the window."""

    name = "drop_oldest"

    def select(self, history: Sequence[Message], budget: Budget) -> Selection:
        room = budget.for_history
        n = len(history)
        if room is None or budget.history <= room:
            return Selection.everything(n)
        last_user = max((i for i in range(n) if isinstance(history[i], UserMessage)), default=n - 1)
        used = budget.history
        start = 0
        for a, b in turn_groups(history):
            if used <= room or a >= last_user:
                break
            used -= sum(m.tokens for m in history[a:b])
            start = b
        dropped = ((0, start),) if start else ()
        note = f"dropped {start} oldest messages to fit {room} tokens" if start else ""
        return Selection(((start, n),) if start < n else (), dropped=dropped, note=note)

    def __repr__(self) -> str:
        return "DropOldest()"
