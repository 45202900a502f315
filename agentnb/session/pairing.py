"""Tool-call pairing, invariant 2: every assistant tool call is answered exactly once.

In the OpenAI shape, the ``tool`` messages answering an assistant message's ``tool_calls``
must follow it, one per call id, before the next non-tool message. :class:`Pairing` checks
this one message at a time (the session feeds it on every append, so the check is O(1) per
message); :func:`conversation_problems` states every violation as a :class:`Problem`: code
reads its ``index`` and ``kind``, people read its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..messages import Message

__all__ = ["PROBLEM_KINDS", "Pairing", "Problem", "conversation_problems"]

ProblemKind = Literal["orphan_result", "unanswered", "duplicate_id", "open"]
#: ``orphan_result``: a tool result answers no open call; ``unanswered``: calls with no result
#: before the next message; ``duplicate_id``: two calls of one message share an id; ``open``:
#: the last assistant message's calls have no result yet (a run about to execute them).
PROBLEM_KINDS: tuple[ProblemKind, ...] = ("orphan_result", "unanswered", "duplicate_id", "open")


@dataclass(frozen=True, slots=True)
class Problem:
    """One pairing problem at message ``index``: code reads ``kind``, people read ``text``
    (``str(problem)`` is ``"#index: text"``)."""

    index: int
    kind: ProblemKind
    text: str

    def __str__(self) -> str:
        return f"#{self.index}: {self.text}"


class Pairing:
    """Tool-call pairing as a state machine fed one message at a time."""

    __slots__ = ("open", "open_at", "problems")

    def __init__(self) -> None:
        self.open: dict[str, str] = {}  # call id -> tool name, awaiting a result
        self.open_at = -1
        self.problems: list[Problem] = []

    def feed(self, index: int, message: Message) -> None:
        role = message.role  # a string compare: this runs on every append
        if role == "tool":
            call_id = message.tool_call_id  # type: ignore[union-attr]
            if self.open.pop(call_id, None) is None:
                text = f"tool result for call {call_id!r} answers no open call"
                self.problems.append(Problem(index, "orphan_result", text))
            return
        if self.open:
            ids = ", ".join(self.open)
            text = f"calls {ids} have no tool result before message #{index}"
            self.problems.append(Problem(self.open_at, "unanswered", text))
            self.open = {}
        calls = message.tool_calls if role == "assistant" else None  # type: ignore[union-attr]
        if calls:
            self.open_at = index
            for call in calls:
                if call.id in self.open:
                    text = f"two tool calls share the id {call.id!r}"
                    self.problems.append(Problem(index, "duplicate_id", text))
                self.open[call.id] = call.function.name


def conversation_problems(messages: Sequence[Message]) -> list[Problem]:
    """Every way ``messages`` breaks invariant 2 ([] for a valid conversation)."""
    pairing = Pairing()
    for i, m in enumerate(messages):
        pairing.feed(i, m)
    return open_problems(pairing)


def open_problems(pairing: Pairing) -> list[Problem]:
    """The pairing's problems, plus its still-open calls as an ``open`` problem."""
    out = list(pairing.problems)
    if pairing.open:
        text = f"calls {', '.join(pairing.open)} have no tool result yet"
        out.append(Problem(pairing.open_at, "open", text))
    return out
