"""A user's turn: what it said and why, and the event that announces it.

A :class:`UserTurn` is recorded on the run it starts (``record.annotations["user"]``, the
run is the record: DESIGN invariant 7), and the user's closing words (done, gave up) on the
conversation's last run (``annotations["conversation"]``). :class:`UserReplied` announces a
turn on the session's bus, stage ``"user"``, so a live view marks the message before it lands.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ...errors import ConfigurationError
from ...events import Event

__all__ = ["BY", "UserReplied", "UserTurn", "digest"]


def digest(text: str | None) -> str:
    """A short digest of an answer: a recorded turn is served only to the same answer."""
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()[:16]


#: Who played a turn: the rules, a model, a person (taken over), or a recording (replayed).
BY = ("rules", "model", "person", "recording")


@dataclass(frozen=True)
class UserTurn:
    """One turn of the user's side of a conversation.

    ``turn`` counts from 0 (the opening); ``text`` is what it said; ``by`` who played it
    (:data:`BY`); ``rule`` the rule that produced it (``User.rules()``), ``why`` in words;
    ``unread`` what it read in the agent's answer and could not use (a question outside its
    facts, answered "I don't know"); ``asked`` the slots the answer asked for, ``repeated``
    those it had already given; ``gave`` the facts it gave now, ``held_back`` those it still
    keeps; ``patience`` what is left; ``slips`` the seeded slips that fired; ``done`` /
    ``gave_up`` end the conversation; ``replied_to`` a digest of the answer it read (a replay
    serves the turn only to the same answer)."""

    turn: int
    text: str
    by: str = "rules"
    rule: str = ""
    why: str = ""
    unread: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()
    gave: dict[str, str] = field(default_factory=dict)
    held_back: tuple[str, ...] = ()
    patience: int = 0
    slips: tuple[str, ...] = ()
    done: bool = False
    gave_up: bool = False
    replied_to: str = ""

    def __post_init__(self) -> None:
        if self.by not in BY:
            raise ConfigurationError(f"a user turn is played by one of {BY}, not {self.by!r}")

    @property
    def ends(self) -> bool:
        """Does this turn end the conversation (done, or gave up)?"""
        return self.done or self.gave_up

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("unread", "asked", "repeated", "held_back", "slips"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UserTurn:
        """A turn read back from :meth:`to_dict`'s data (a saved evaluation, a recording)."""
        try:
            fields = dict(data)
            for key in ("unread", "asked", "repeated", "held_back", "slips"):
                fields[key] = tuple(str(v) for v in fields.get(key) or ())
            fields["gave"] = {str(k): str(v) for k, v in (fields.get("gave") or {}).items()}
            return cls(**fields)
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"not a user turn ({type(exc).__name__}: {exc})") from None

    @classmethod
    def of(cls, value: Any) -> UserTurn | None:
        """A turn from an annotation (the turn itself, or its dict read back), else None."""
        if isinstance(value, UserTurn) or value is None:
            return value
        return cls.from_dict(value) if isinstance(value, Mapping) else None

    def __str__(self) -> str:
        how = f"{self.by}: {self.rule}" if self.rule else self.by
        return f"[user turn {self.turn}, {how}] {self.text}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class UserReplied(Event):
    """The conversation's user replied (stage ``"user"``): emitted by a conversation driver
    (:class:`agentnb.evals.Conversation`) on the session's bus, never by the loop. ``turn`` is
    the :class:`UserTurn` as a dict; ``index`` where its message lands (the next run's input,
    or the closing message); ``user`` what plays it (goal, facts held, patience: shown by the
    view)."""

    turn: dict[str, Any] = field(default_factory=dict)
    index: int = -1
    user: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        text = str(self.turn.get("text", "")).replace("\n", " ")
        how = self.turn.get("rule") or self.turn.get("by")
        return f"user turn {self.turn.get('turn')} ({how}): {text[:60]}"
