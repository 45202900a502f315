"""Tool-call pairing, invariant 2: every assistant tool call is answered exactly once.

In the OpenAI shape, the ``tool`` messages answering an assistant message's ``tool_calls``
must follow it, one per call id, before the next non-tool message. :class:`Pairing` checks
this one message at a time (the session feeds it on every append, so the check is O(1) per
message); :func:`conversation_problems` states every violation in words.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message

__all__ = ["Pairing", "conversation_problems"]


class Pairing:
    """Tool-call pairing as a state machine fed one message at a time."""

    __slots__ = ("open", "open_at", "problems")

    def __init__(self) -> None:
        self.open: dict[str, str] = {}  # call id -> tool name, awaiting a result
        self.open_at = -1
        self.problems: list[tuple[int, str]] = []

    def feed(self, index: int, message: Message) -> None:
        role = message.role  # a string compare: this runs on every append
        if role == "tool":
            call_id = message.tool_call_id  # type: ignore[union-attr]
            if self.open.pop(call_id, None) is None:
                problem = f"tool result for call {call_id!r} answers no open call"
                self.problems.append((index, problem))
            return
        if self.open:
            ids = ", ".join(self.open)
            self.problems.append(
                (self.open_at, f"calls {ids} have no tool result before message #{index}")
            )
            self.open = {}
        calls = message.tool_calls if role == "assistant" else None  # type: ignore[union-attr]
        if calls:
            self.open_at = index
            for call in calls:
                if call.id in self.open:
                    self.problems.append((index, f"two tool calls share the id {call.id!r}"))
                self.open[call.id] = call.function.name


def conversation_problems(messages: Sequence[Message]) -> list[str]:
    """Every way ``messages`` breaks invariant 2, in words ([] for a valid conversation)."""
    pairing = Pairing()
    for i, m in enumerate(messages):
        pairing.feed(i, m)
    out = [f"#{i}: {text}" for i, text in pairing.problems]
    if pairing.open:
        out.append(f"#{pairing.open_at}: calls {', '.join(pairing.open)} have no tool result yet")
    return out
