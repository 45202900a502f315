"""A run's trajectory as reply batches: each assistant reply's tool calls, with their results.

Checks and diffs read trajectories as batches, not as flattened spans: calls made in one
reply (in parallel) stay together. ``batches(messages)`` reads any list of message objects
or OpenAI dicts (a run's ``result.messages``, a session's ``messages``).

A call is paired with its result **by position**: the results of a reply are the tool
messages that follow it, before the next reply or user turn, and a call takes the one
carrying its id there — never a message of another turn, since models that number their
calls ``call_0`` in every turn reuse ids across a session. Each call knows where it sits:
``turn`` (the user turn, from 0), ``step`` (the reply within that turn that called tools,
from 0) and ``index`` (its place in the reply), the coordinates tool recordings replay by.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..tools import error_kind
from .normalise import canonical

__all__ = ["REPLAY_MISSES", "PairedCall", "batches", "calls", "left_recording", "position_of"]

#: The error kinds of a replaying tool that left its recorded trajectory.
REPLAY_MISSES = ("mismatch", "exhausted", "not_recorded")


@dataclass(frozen=True, slots=True)
class PairedCall:
    """One tool call of a trajectory, with the result it got (``None`` if unanswered)."""

    name: str
    arguments: str  # the raw JSON text the model sent
    id: str
    batch: int  # which reply (0-based, counting replies that called tools)
    result: str | None = None
    kind: str | None = None  # the result's error kind (None: ok or unanswered)
    turn: int = 0  # the user turn it was made in (0-based)
    step: int = 0  # which reply of that turn that called tools (0-based)
    index: int = 0  # its place in the reply

    @property
    def position(self) -> tuple[int, int, int]:
        """``(turn, step, index)``: where the call sits in its run."""
        return self.turn, self.step, self.index

    @property
    def where(self) -> str:
        """``turn 1, step 0, call 2``: the position in words."""
        return f"turn {self.turn}, step {self.step}, call {self.index}"

    @property
    def args(self) -> dict[str, Any]:
        """The arguments as a dict (``{}`` when they are not a JSON object)."""
        try:
            value = json.loads(self.arguments) if self.arguments.strip() else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def key(self) -> tuple[str, str]:
        """``(name, canonical arguments)``: what recordings and alignment compare."""
        return self.name, canonical(self.arguments)

    def __str__(self) -> str:
        return f"{self.name}({self.arguments})"


def _wire(message: Any) -> dict[str, Any]:
    return message if isinstance(message, dict) else message.wire()


def _is_input(wire: dict[str, Any]) -> bool:
    """A user turn (not a correction the runtime added, which is named ``agentnb``)."""
    return wire.get("role") == "user" and wire.get("name") != "agentnb"


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def batches(messages: Iterable[Any]) -> list[list[PairedCall]]:
    """The tool calls of ``messages``, one list per assistant reply that made any, each
    paired with its result by position (see the module docstring)."""
    wires = [_wire(m) for m in messages]
    out: list[list[PairedCall]] = []
    turn, step = -1, 0
    for i, m in enumerate(wires):
        if _is_input(m):
            turn, step = turn + 1, 0
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            continue
        answers: dict[str, list[str]] = {}  # this reply's results, by call id, in order
        for later in wires[i + 1 :]:
            if later.get("role") == "assistant" or _is_input(later):
                break
            if later.get("role") == "tool":
                answers.setdefault(str(later.get("tool_call_id")), []).append(
                    _text(later.get("content"))
                )
        batch = []
        for index, c in enumerate(m["tool_calls"]):
            fn = c.get("function") or {}
            found = answers.get(str(c.get("id")))
            result = found.pop(0) if found else None
            args = fn.get("arguments")
            raw = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
            batch.append(
                PairedCall(
                    str(fn.get("name")),
                    raw,
                    str(c.get("id")),
                    len(out),
                    result,
                    error_kind(result) if result is not None else None,
                    max(turn, 0),
                    step,
                    index,
                )
            )
        out.append(batch)
        step += 1
    return out


def position_of(messages: Iterable[Any], call_id: str) -> tuple[int, int, int] | None:
    """``(turn, step, index)`` of the latest call with ``call_id`` in ``messages`` (a session
    while a replaying tool runs: its reply is the last one), or None when there is none."""
    found = None
    for batch in batches(messages):
        for call in batch:
            if call.id == call_id:
                found = call.position
    return found


def calls(messages: Iterable[Any]) -> list[PairedCall]:
    """Every tool call of ``messages``, flattened in order."""
    return [c for batch in batches(messages) for c in batch]


def left_recording(messages: Iterable[Any]) -> str:
    """Where a replaying run first left its recording (``turn 0, step 1, call 0: f(...) is a
    replay mismatch``), over every turn of ``messages``; "" when it never did."""
    for batch in batches(messages):
        for call in batch:
            if call.kind in REPLAY_MISSES:
                return f"{call.where}: {call} is a replay {call.kind}"
    return ""
