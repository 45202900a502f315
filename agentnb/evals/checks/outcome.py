"""Checks over how the run went: why it stopped, how long it took, tool errors, end state,
and the answer with the end state together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ...errors import ConfigurationError
from .base import Check, Evidence, FunctionCheck, call_off_loop, strings, verdict
from .conversation import scoped

__all__ = [
    "AnswerAndState",
    "EndState",
    "MaxSteps",
    "NoToolErrors",
    "StopsWith",
    "answer_and_state",
    "end_state",
    "max_steps",
    "no_tool_errors",
    "stops_with",
]


@dataclass(frozen=True, repr=False)
class StopsWith(Check):
    """The run stopped for one of ``reasons`` (see :func:`stops_with`)."""

    kind: ClassVar[str] = "stops_with"
    reasons: tuple[str, ...]

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Check:
        return cls(tuple(fields["reasons"]))

    @property
    def name(self) -> str:
        return f"stops_with({', '.join(map(repr, self.reasons))})"

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        got = evidence.result.stop_reason
        if got in self.reasons:
            return True, ""
        return False, f"stopped with {got!r} ({evidence.result.stop_detail})"


def stops_with(*reasons: str | list[str], over: str = "turn") -> Check:
    """The run's ``stop_reason`` is one of ``reasons`` (``"final_answer"``, ...; a list of
    them too); a reason no run can stop with is refused here. ``over="conversation"``: how
    the conversation stopped (``"user_done"``, ``"user_gave_up"``, ``"max_turns"``, ...)."""
    from ...events import CONVERSATION_STOP_REASONS, STOP_REASONS

    given = strings("stops_with", reasons)
    known = CONVERSATION_STOP_REASONS if over == "conversation" else STOP_REASONS
    unknown = [r for r in given if r not in known]
    if unknown:
        what = "a conversation stops" if over == "conversation" else "no run stops"
        raise ConfigurationError(
            f"stops_with: {what} with {unknown[0]!r}; the reasons: {', '.join(known)}"
        )
    return scoped(StopsWith(given), over)


def steps_of(evidence: Evidence) -> int:
    """Steps of a run: its replies that called tools (reply batches)."""
    return len(evidence.batches)


@dataclass(frozen=True, repr=False)
class MaxSteps(Check):
    """At most ``n`` steps (replies that called tools)."""

    kind: ClassVar[str] = "max_steps"
    n: int

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        steps = steps_of(evidence)
        return steps <= self.n, "" if steps <= self.n else f"{steps} steps (at most {self.n})"


def max_steps(n: int, *, over: str = "turn") -> Check:
    """The run took at most ``n`` steps: replies that called tools (one batch is one step)."""
    return scoped(MaxSteps(n), over)


@dataclass(frozen=True, repr=False)
class NoToolErrors(Check):
    """No tool result was an error (any kind: timeout, invalid_arguments, not_recorded ...)."""

    kind: ClassVar[str] = "no_tool_errors"

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        bad = [f"{c.name}: {c.kind}" for c in evidence.calls if c.kind is not None]
        return not bad, "" if not bad else "tool errors: " + "; ".join(bad)


def no_tool_errors(*, over: str = "turn") -> Check:
    """No tool call of the run got an error result."""
    return scoped(NoToolErrors(), over)


@dataclass(frozen=True, repr=False)
class EndState(Check):
    """A check over the tools' state after the run (see :func:`end_state`)."""

    kind: ClassVar[str] = "end_state"
    fn: Callable[..., Any]

    @property
    def name(self) -> str:
        return f"end_state({FunctionCheck(self.fn).name})"

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.kind, "fn": FunctionCheck(self.fn).to_dict()}

    @classmethod
    def from_fields(cls, fields: dict[str, Any], *, trust: bool = False) -> Check:
        from .base import check_from_dict

        inner = fields.get("fn") or {"check": "function", "ref": fields["ref"]}
        return cls(check_from_dict(inner, trust=trust).fn)  # type: ignore[attr-defined]

    async def judge(self, evidence: Evidence) -> tuple[bool, str]:
        return verdict(await call_off_loop(self.fn, evidence.state))


def end_state(fn: Callable[[Any], Any]) -> EndState:
    """``fn(state) -> bool | str`` over the state after the run, as τ-bench checks bookings.

    ``state`` is what the task's ``setup(agent)`` returned (for example the tools' desk it
    built), or the run's agent when there is no setup or it returned None.
    """
    return EndState(fn)


@dataclass(frozen=True, repr=False)
class AnswerAndState(EndState):
    """A check over the answer and the state after the run (see :func:`answer_and_state`)."""

    kind: ClassVar[str] = "answer_and_state"

    @property
    def name(self) -> str:
        return f"answer_and_state({FunctionCheck(self.fn).name})"

    async def judge(self, evidence: Evidence) -> tuple[bool, str]:
        return verdict(await call_off_loop(self.fn, evidence.output, evidence.state))


def answer_and_state(fn: Callable[[str, Any], Any]) -> AnswerAndState:
    """``fn(answer, state) -> bool | str`` over the final answer and the state after the run
    together, as a benchmark's utility check does (the booking was made *and* the answer
    says so, with its number).

    ``answer`` is the run's final text (``""`` when it gave none); ``state`` is what
    :func:`end_state` reads: what the task's ``tools`` factory or ``setup(agent)`` returned,
    else the run's agent. ``True`` passes, a string is the reason it failed. Like
    ``end_state``, it is an end-state check: saved by the function's import path or source.

        def booked_and_said(answer, desk):
            booking = desk.bookings[-1] if desk.bookings else None
            if booking is None:
                return "nothing was booked"
            return "" if booking.id in answer else f"the answer does not give {booking.id}"

        an.Task("book-a", "Book room A at 10.", [an.checks.answer_and_state(booked_and_said)],
                tools=make_desk)
    """
    return AnswerAndState(fn)
