"""A conversation read back from its runs: the user's turns, the agent's answers, how it ended.

A conversation is no new record (DESIGN invariant 7): each agent turn is an ordinary run on
the conversation's session, tagged with its ``turn`` (and, in an evaluation, its row), its
input the user's turn, recorded on it as ``record.annotations["user"]`` (a
:class:`~agentnb.evals.user.UserTurn`); the last run carries how the conversation ended,
``annotations["conversation"]`` (a :class:`Ended`: the stop reason, the user's closing turn,
the user that played it). :func:`turns_of` reads them back, from a live session or one loaded
from a file, into a :class:`Turns`: what conversation checks, the outputs grid, the trajectory
diff and the view read.

The conversation's stop reasons, beside the loop's own (``an.STOP_REASONS``, which each
turn's run still has): ``user_done``, ``user_gave_up``, ``max_turns`` (:data:`STOPS`), and
for a replayed user the replay's own ``mismatch``, ``exhausted``, ``not_recorded``; ``error``
and ``cancelled`` when a turn's run raised or was cancelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..events import CONVERSATION_STOP_REASONS
from .batches import REPLAY_MISSES
from .user.turn import UserTurn

if TYPE_CHECKING:
    from ..session import RunRecord, Session

__all__ = [
    "CONVERSATION",
    "STOPS",
    "USER",
    "Ended",
    "Turns",
    "ended",
    "note",
    "parted",
    "row_of",
    "stop_of",
    "turn_runs",
    "turns_of",
    "user_left",
    "user_turns",
]

#: Where a run's user turn lives in ``record.annotations``, and the conversation's end.
USER, CONVERSATION = "user", "conversation"
#: How a conversation can stop (documented beside the loop's, in ``agentnb.events``).
STOPS = CONVERSATION_STOP_REASONS


@dataclass(frozen=True)
class Ended:
    """How a conversation ended: ``stop_reason`` (:data:`STOPS`), ``detail`` in words,
    ``turns`` (the agent's turns it took), ``closing`` (the user's last turn: its thanks, its
    giving up, or the reply ``max_turns`` cut off, never sent) and ``user`` (what played it:
    ``User.describe()``)."""

    stop_reason: str
    detail: str = ""
    turns: int = 0
    closing: UserTurn | None = None
    user: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.stop_reason not in STOPS:
            raise ConfigurationError(
                f"a conversation stops with one of {', '.join(STOPS)}, not {self.stop_reason!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "stop_reason": self.stop_reason,
            "detail": self.detail,
            "turns": self.turns,
            "closing": None if self.closing is None else self.closing.to_dict(),
            "user": self.user,
        }

    @classmethod
    def of(cls, value: Any) -> Ended | None:
        """The annotation as an :class:`Ended` (itself, or its dict read back), else None."""
        if value is None or isinstance(value, Ended):
            return value
        if not isinstance(value, Mapping):
            return None
        try:
            return cls(str(value["stop_reason"]), str(value.get("detail") or ""),
                       int(value.get("turns") or 0), UserTurn.of(value.get("closing")),
                       dict(value.get("user") or {}))  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"not a conversation's end ({exc})") from None


def note(record: RunRecord, key: str, value: UserTurn | Ended) -> None:
    """Record what a conversation found out about a run: the user turn its input was
    (:data:`USER`), or how the conversation ended at it (:data:`CONVERSATION`). The one place
    these annotations are written."""
    if key not in (USER, CONVERSATION):
        raise ConfigurationError(f"a conversation notes {USER!r} or {CONVERSATION!r}, not {key!r}")
    if record.annotations is None:
        record.annotations = {}
    record.annotations[key] = value


def user_turn(record: RunRecord) -> UserTurn | None:
    """The user turn a run's input was (None: not a conversation's turn)."""
    found = (record.annotations or {}).get(USER)
    return UserTurn.of(found)


def ended(record: RunRecord) -> Ended | None:
    """How the conversation this run ended ended (None: it did not end at this run)."""
    return Ended.of((record.annotations or {}).get(CONVERSATION))


@dataclass
class Turns:
    """A conversation read back from its runs (see the module docstring).

    ``user`` holds the user's turns (the opening first, the closing last when there is one),
    ``runs`` the agent's turns' records, in order; ``session`` the session they ran on.
    ``messages``, ``output``, ``stop_reason`` and ``stop_detail`` make it what a check reads
    over the whole conversation (``over="conversation"``), as a run's result is for one turn.
    """

    session: Session | None
    runs: list[RunRecord]
    user: list[UserTurn]
    end: Ended | None

    @property
    def stop_reason(self) -> str | None:
        """How the conversation stopped (going on: how its last turn's run stopped)."""
        if self.end is not None:
            return self.end.stop_reason
        return self.runs[-1].stop_reason if self.runs else None

    @property
    def stop_detail(self) -> str:
        if self.end is not None:
            return self.end.detail
        return self.runs[-1].detail if self.runs else ""

    @property
    def closing(self) -> UserTurn | None:
        return self.end.closing if self.end is not None else None

    @property
    def answers(self) -> list[str]:
        """The agent's answer of each turn ("" for a turn that gave none)."""
        return [r.output or "" for r in self.runs]

    @property
    def output(self) -> str | None:
        """The agent's last answer (what a check over one turn reads, for the last turn)."""
        return self.runs[-1].output if self.runs else None

    @property
    def messages(self) -> list[Any]:
        """Every message of the conversation: from its first turn's input to the closing
        message (when the user said one)."""
        session = self.session
        if session is None or not self.runs or self.runs[0].start is None:
            return []
        end = len(session)
        closing = self.closing
        if closing is None or not closing.ends:  # no closing message was appended
            last = self.runs[-1]
            end = last.end if last.end >= 0 else end
        return list(session.messages[self.runs[0].start : end])

    @property
    def asked(self) -> list[tuple[int, str]]:
        """``(turn, slot)`` for each slot the agent asked for, as the user read it."""
        return [(t.turn, s) for t in self.user for s in t.asked]

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        how = self.stop_reason or "going on"
        return f"<Turns {len(self.runs)} agent turns, {len(self.user)} user turns, {how}>"


def turns_of(session: Session | None, record: RunRecord | None = None) -> Turns | None:
    """The conversation ``record``'s run belongs to (its runs: those tagged like it, the
    ``turn`` tag aside; every annotated run of ``session`` when ``record`` is None), or None
    when that run is no conversation's turn."""
    if session is None:
        return None
    runs: Sequence[RunRecord] = session.runs
    if record is not None:
        key = row_of(record.tags)
        runs = [r for r in runs if row_of(r.tags) == key]
        if not any(r is record for r in runs):
            runs = [*runs, record]
    turns = [(r, user_turn(r)) for r in runs]
    mine = [(r, t) for r, t in turns if t is not None]
    if not mine:
        return None
    records = [r for r, _ in mine]
    users = [t for _, t in mine]
    end = next((e for r in reversed(records) if (e := ended(r)) is not None), None)
    if end is not None and end.closing is not None:
        users.append(end.closing)
    return Turns(session, records, users, end)


def turn_runs(record: RunRecord, runs: Sequence[RunRecord]) -> list[RunRecord]:
    """The agent's turns among a row's ``runs`` when ``record``'s is a conversation (what its
    row's figures sum), else ``record`` alone (a task's history turns are not its figures)."""
    return [r for r in runs if user_turn(r) is not None] if user_turn(record) else [record]


def stop_of(record: RunRecord) -> str | None:
    """Why the conversation stopped at ``record``, else why its run stopped."""
    found = ended(record)
    return found.stop_reason if found is not None else record.stop_reason


def user_left(record: RunRecord) -> str:
    """Where a replayed user left its recording (the conversation stopped at ``record`` with
    the replay's miss: mismatch, exhausted, not_recorded), or ""."""
    found = ended(record)
    if found is None or found.stop_reason not in REPLAY_MISSES:
        return ""
    return f"{found.detail} (a replay {found.stop_reason} of the user)"


def parted(record: RunRecord) -> tuple[tuple[int, int, int], str] | None:
    """Where and how a replayed user left its recording, as a replay's difference (before
    any call of the turn it did not give: :func:`agentnb.evals.faithful.judge`), or None."""
    found, why = ended(record), user_left(record)
    return ((found.turns, -1, -1), why) if found is not None and why else None


def user_turns(source: Any) -> list[UserTurn]:
    """Every user turn a session's conversations recorded, in order (the closing ones
    too): what a tool recording keeps to replay them; [] for anything that is no session."""
    runs = getattr(source, "runs", None)
    if not runs:
        return []
    found: list[UserTurn] = []
    for record in runs:
        turn = user_turn(record)
        if turn is not None:
            found.append(turn)
        end = ended(record)
        if end is not None and end.closing is not None:
            found.append(end.closing)
    return found


def row_of(tags: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A run's tags without its ``turn``: what the turns of one conversation share."""
    return tuple(sorted((k, v) for k, v in tags.items() if k != "turn"))
