"""Checks over a conversation: the goal, the turns, what the agent asked for, and any check
read over every turn.

    an.checks.goal_reached()                     # the user said it is done (user_done)
    an.checks.goal_reached(booked)               # or: booked(state), the end state decides
    an.checks.turns(max=3)                       # the agent's turns
    an.checks.asked_for("city")                  # it asked (as the user read it), not guessed
    an.checks.never_asked_twice()                # never asked for a fact already given
    an.checks.calls("book_hotel", over="conversation")   # any check, over every turn

Every check reads the task's last turn (its run) unless told ``over="conversation"``: then it
reads the whole conversation, its messages from the first turn's input, its last answer and
its stop reason (``user_done``, ``user_gave_up``, ``max_turns``; see
:mod:`agentnb.evals.turns`). ``asked_for`` and ``never_asked_twice`` read what the user read
in each answer (``turn.asked``, ``turn.repeated``): the same reading that made it reply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ...errors import ConfigurationError
from ..user.cues import ALIASES
from .base import Check, Evidence, FunctionCheck, as_check, call_off_loop, check_from_dict, verdict

__all__ = [
    "SCOPES",
    "AskedFor",
    "GoalReached",
    "NeverAskedTwice",
    "Over",
    "Turns",
    "asked_for",
    "goal_reached",
    "never_asked_twice",
    "over",
    "turns",
]

#: What a check reads: the last turn (the task's run), or the whole conversation.
SCOPES = ("turn", "conversation")
Scope = Literal["turn", "conversation"]


def over(check: Check, scope: str = "conversation") -> Check:
    """``check`` read over ``scope``: itself for ``"turn"``, wrapped to read every turn for
    ``"conversation"`` (what each check's ``over=`` does)."""
    if scope not in SCOPES:
        raise ConfigurationError(f"over is one of {SCOPES}, not {scope!r}")
    return check if scope == "turn" else Over(check)


@dataclass(frozen=True, repr=False)
class Over(Check):
    """A check read over the whole conversation (see :func:`over`)."""

    kind: ClassVar[str] = "over"
    check: Check

    @property
    def name(self) -> str:
        return f"{self.check.name} over the conversation"

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.kind, "over": "conversation", "inner": self.check.to_dict()}

    @classmethod
    def from_fields(cls, fields: dict[str, Any], *, trust: bool = False) -> Check:
        return cls(check_from_dict(fields["inner"], trust=trust))

    def judge(self, evidence: Evidence) -> Any:
        return self.check.judge(evidence.over_conversation())


def _conversation(evidence: Evidence) -> Any:
    found = evidence.conversation
    if found is None:
        raise _NoConversation
    return found


class _NoConversation(Exception):
    """The task has no user: a conversation check has nothing to read."""


_NOT_ONE = "the task is not a conversation (it has no user): nothing to read"


@dataclass(frozen=True, repr=False)
class GoalReached(Check):
    """The goal reached: by the user's own word, or by the end state (see :func:`goal_reached`)."""

    kind: ClassVar[str] = "goal_reached"
    fn: Callable[..., Any] | None = None

    @property
    def name(self) -> str:
        return f"goal_reached({FunctionCheck(self.fn).name})" if self.fn else "goal_reached()"

    def to_dict(self) -> dict[str, Any]:
        if self.fn is None:
            return {"check": self.kind}
        return {"check": self.kind, "fn": FunctionCheck(self.fn).to_dict()}

    @classmethod
    def from_fields(cls, fields: dict[str, Any], *, trust: bool = False) -> Check:
        inner = fields.get("fn")
        return cls(check_from_dict(inner, trust=trust).fn if inner else None)  # type: ignore[attr-defined]

    async def judge(self, evidence: Evidence) -> tuple[bool, str]:
        if self.fn is not None:
            return verdict(await call_off_loop(self.fn, evidence.state))
        try:
            talk = _conversation(evidence)
        except _NoConversation:
            return False, _NOT_ONE
        if talk.stop_reason == "user_done":
            return True, ""
        return False, f"the conversation stopped with {talk.stop_reason}: {talk.stop_detail}"


def goal_reached(fn: Callable[[Any], Any] | None = None) -> GoalReached:
    """The conversation reached its goal: the user said it is done (``user_done``); or, with
    ``fn``, ``fn(state) -> bool | str`` over the end state decides (a booking made with the
    right hotel and dates), as :func:`~agentnb.checks.end_state` does."""
    return GoalReached(fn)


@dataclass(frozen=True, repr=False)
class Turns(Check):
    """The agent's turns within bounds (see :func:`turns`)."""

    kind: ClassVar[str] = "turns"
    max: int | None = None
    min: int | None = None

    @property
    def name(self) -> str:
        bounds = [f"{k}={v}" for k, v in (("max", self.max), ("min", self.min)) if v is not None]
        return f"turns({', '.join(bounds)})"

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        try:
            n = len(_conversation(evidence))
        except _NoConversation:
            return False, _NOT_ONE
        if self.max is not None and n > self.max:
            return False, f"{n} turns (at most {self.max})"
        if self.min is not None and n < self.min:
            return False, f"{n} turns (at least {self.min})"
        return True, ""


def turns(max: int | None = None, min: int | None = None) -> Turns:
    """The agent took at most ``max`` (at least ``min``) turns: answers to the user."""
    if max is None and min is None:
        raise ConfigurationError("turns() needs max= or min=")
    return Turns(max, min)


@dataclass(frozen=True, repr=False)
class AskedFor(Check):
    """The agent asked for a slot (see :func:`asked_for`)."""

    kind: ClassVar[str] = "asked_for"
    slot: str

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        try:
            talk = _conversation(evidence)
        except _NoConversation:
            return False, _NOT_ONE
        accepted = {self.slot, *ALIASES.get(self.slot, ())}
        asked = [(turn, slot) for turn, slot in talk.asked if slot in accepted]
        if asked:
            return True, ""
        seen = ", ".join(f"turn {t}: {s}" for t, s in talk.asked) or "nothing"
        return False, f"the agent never asked for {self.slot} (it asked for {seen})"


def asked_for(slot: str) -> AskedFor:
    """The agent asked the user for ``slot`` (``"city"``, ``"date"``, ``"origin"``, a fact's
    own name...) in some turn, as the user read its answer: it asked instead of guessing. A
    question for the city and one for the destination count for each other."""
    return AskedFor(slot)


@dataclass(frozen=True, repr=False)
class NeverAskedTwice(Check):
    """No fact asked for again once given (see :func:`never_asked_twice`)."""

    kind: ClassVar[str] = "never_asked_twice"

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        try:
            talk = _conversation(evidence)
        except _NoConversation:
            return False, _NOT_ONE
        again = [f"turn {t.turn}: {', '.join(t.repeated)}" for t in talk.user if t.repeated]
        return not again, "" if not again else "asked again for " + "; ".join(again)


def never_asked_twice() -> NeverAskedTwice:
    """The agent never asked the user for a fact it had already been given."""
    return NeverAskedTwice()


def scoped(check: Any, scope: str) -> Check:
    """A check (or a function) as given, read over ``scope`` (each factory's ``over=``)."""
    return over(as_check(check), scope)
