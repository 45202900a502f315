"""Context policies: which part of the history goes into a request (``assemble``, 002 §2.2).

A :class:`ContextPolicy` looks at the history and the token :class:`Budget` and returns a
:class:`Selection`: the spans of the history it keeps, in order, and any messages it inserts
after the instructions (a summary, retrieved memory). Policies work on *turn groups*
(:func:`turn_groups`): an assistant message with tool calls and the tool messages answering it
are one group, so a policy can never separate a call from its results.

:class:`KeepAll` is the default. :class:`DropOldest` (the default once a window is set) drops
whole turns (:func:`turns`: a question with its answer, calls and results) from the oldest
until the history fits, always keeping the newest user message and everything after it;
:class:`KeepLastTurns` keeps the last N turns; and
:class:`~agentnb.context.summarise.SummariseOldest` replaces what does not fit by a marked summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigurationError
from ..messages import RUNTIME_NAME, AssistantMessage, Message, ToolMessage
from ..tokens import DEFAULT_TOKENIZER, Tokenizer

__all__ = [
    "Budget",
    "ContextPolicy",
    "DropOldest",
    "KeepAll",
    "KeepLastTurns",
    "Selection",
    "message_counter",
    "oldest_to_drop",
    "turn_groups",
    "turns",
]


def _heuristic(message: Message) -> int:
    return message.tokens


def message_counter(tokenizer: Tokenizer) -> Callable[[Message], int]:
    """How a budget counts one message with ``tokenizer``: the message's own cached
    estimate for the default heuristic, else the tokenizer's count of its wire dict."""
    if tokenizer is DEFAULT_TOKENIZER:
        return _heuristic
    return lambda message: tokenizer.count_message(message.wire())


@dataclass(frozen=True, slots=True)
class Budget:
    """Tokens of one request: the window and reserve (when set) and what each part costs."""

    instructions: int
    tools: int
    history: int
    context_window: int | None = None
    reply_reserve: int = 0
    #: Counts one message with the agent's tokenizer (the heuristic by default).
    count: Callable[[Message], int] = _heuristic

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
    """``select`` returns a :class:`Selection`, or an awaitable of one (to call a model)."""

    name: str

    def select(self, history: Sequence[Message], budget: Budget) -> Any: ...


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


def _starts_turn(message: Message) -> bool:
    return message.role == "user" and getattr(message, "name", None) != RUNTIME_NAME


def turns(history: Sequence[Message]) -> list[tuple[int, int]]:
    """Half-open index ranges of whole turns: a user message and everything up to the next
    one (its answer, tool calls and their results; runtime corrections stay inside). What
    comes before the first user message is split into :func:`turn_groups`."""
    starts = [i for i, m in enumerate(history) if _starts_turn(m)]
    if not starts:
        return turn_groups(history)
    out = turn_groups(history[: starts[0]])
    out += list(zip(starts, [*starts[1:], len(history)], strict=True))
    return out


class KeepAll:
    """Send the whole history (the default without a context window)."""

    name = "keep_all"

    def select(self, history: Sequence[Message], budget: Budget) -> Selection:
        return Selection.everything(len(history))

    def __repr__(self) -> str:
        return "KeepAll()"


def _last_user(history: Sequence[Message]) -> int:
    """Index of the newest user message (never dropped), or the last index."""
    for i in range(len(history) - 1, -1, -1):
        if history[i].role == "user":
            return i
    return len(history) - 1


def oldest_to_drop(history: Sequence[Message], budget: Budget, spare: int = 0) -> int:
    """How many oldest messages (whole turns) must go for the rest to fit, with
    ``spare`` tokens left over (for a summary that will replace them)."""
    room = budget.for_history
    if room is None or budget.history <= room:
        return 0
    room -= spare
    last_user, used, start = _last_user(history), budget.history, 0
    count = budget.count
    for a, b in turns(history):
        if used <= room or b > last_user:  # the newest question's turn always stays
            break
        used -= sum(count(m) for m in history[a:b])
        start = b
    return start


class DropOldest:
    """Drop the oldest whole turns (:func:`turns`) until the history fits the window: an
    answer never stays without its question, a tool call never without its results."""

    name = "drop_oldest"

    def select(self, history: Sequence[Message], budget: Budget) -> Selection:
        n, start = len(history), oldest_to_drop(history, budget)
        if not start:
            return Selection.everything(n)
        note = f"dropped the {start} oldest messages to fit {budget.for_history} tokens"
        return Selection(((start, n),) if start < n else (), dropped=((0, start),), note=note)

    def __repr__(self) -> str:
        return "DropOldest()"


class KeepLastTurns:
    """Keep the last ``n`` turns: each starts at a user message (corrections stay inside)."""

    name = "keep_last_turns"

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigurationError(f"KeepLastTurns needs a whole number n >= 1, got {n!r}")
        self.n = n

    def select(self, history: Sequence[Message], budget: Budget) -> Selection:
        starts = [i for i, m in enumerate(history) if _starts_turn(m)]
        start = starts[-self.n] if len(starts) > self.n else 0
        kept = history[start:]
        used = sum(budget.count(m) for m in kept)
        fit = oldest_to_drop(kept, replace(budget, history=used))
        start += fit  # still over the window: fewer turns
        if not start:
            return Selection.everything(len(history))
        note = f"kept the last {self.n} turns" if not fit else "kept the turns that fit the window"
        note += f"; dropped the {start} messages before them"
        return Selection(((start, len(history)),), dropped=((0, start),), note=note)

    def __repr__(self) -> str:
        return f"KeepLastTurns({self.n})"
