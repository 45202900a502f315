"""Whether a replay reproduced its recording: exactly (every call as recorded, at its place)
and completely (every recorded call made, none extra).

While a run replays inside an evaluation, the replayer notes each call it answers in the
run's :class:`Log` (:func:`agentnb.evals.replayer.replaying_run` opens it): where the call
sits (turn, step, place), what was called, and whether its own recorded trajectory answered
it. After the run, :func:`judge` compares the log with the recorded run and says how the
replay went, a :class:`Replayed`: the calls recorded, made and reproduced, and the first
difference in the run's order, "" when there is none:

* a call off the recorded trajectory: ``turn 0, step 1, call 0: book({"room":"B"}) is a
  replay mismatch (the recorded run called book({"room":"A"}) at ...)`` (also ``exhausted``,
  ``not_recorded``, and a call the arguments pool or a live tool answered);
* a recorded call never made: ``stopped after 3 of 4 recorded calls: turn 1, step 0, call 0,
  pay({"amount":5}), was never made`` (or, when later calls were made, ``skipped a recorded
  call (3 of 4 made): ...``).

The evaluation writes it on the run's record as ``record.annotations["replay"]``
(:func:`annotate_replay`, the one writer; the row's ``divergence`` reads it), and judges the
run's end state only on a replay that reproduced its recording: otherwise the recorded run's
end state is not this run's, and end-state checks are refused with the difference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from ..session import RunRecord
    from .batches import PairedCall
    from .recording import Recorded

__all__ = [
    "KEY",
    "Answered",
    "Log",
    "Replayed",
    "annotate_replay",
    "difference",
    "judge",
    "replayed",
]

#: Where the annotation lives in ``record.annotations``.
KEY = "replay"

Position = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Answered:
    """One call a replaying tool answered: where, what, and ``miss`` (the replay kind of a
    call its own recorded trajectory did not answer, with ``why``; "" when it did)."""

    position: Position
    tool: str
    arguments: str  # canonical JSON, as validated
    miss: str = ""
    why: str = ""

    def __str__(self) -> str:
        turn, step, index = self.position
        return f"turn {turn}, step {step}, call {index}: {self.tool}({self.arguments})"


class Log(list[Answered]):
    """The calls one replaying run had answered, in the order they were answered."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """How a replaying run went against its recorded run (see the module docstring)."""

    recorded: int
    made: int
    reproduced: int
    difference: str = ""

    @property
    def faithful(self) -> bool:
        """Every recorded call made at its place, and nothing else."""
        return not self.difference

    def to_dict(self) -> dict[str, Any]:
        return {
            "recorded": self.recorded,
            "made": self.made,
            "reproduced": self.reproduced,
            "difference": self.difference,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Replayed:
        try:
            counts = (int(data["recorded"]), int(data["made"]), int(data["reproduced"]))
            return cls(*counts, str(data.get("difference") or ""))
        except (KeyError, TypeError, ValueError) as exc:
            why = f"{type(exc).__name__}: {exc}"
            raise ConfigurationError(f"not a replay's verdict ({why})") from None


def judge(
    recorded: Mapping[Position, Recorded],
    log: Log,
    calls: Iterable[PairedCall],
    parted: tuple[Position, str] | None = None,
) -> Replayed:
    """How a replay went against ``recorded`` (the recorded run's calls by position): ``log``
    holds the calls its replaying tools answered, ``calls`` every call of its session (those
    the runtime answered itself, such as invalid arguments, and a task's history, compare by
    name and arguments); ``parted``, where a conversation's replayed user left its recording
    (:func:`agentnb.evals.turns.parted`). The first difference is the first in the run's
    order."""
    answered = {a.position: a for a in log}
    made = {c.position: c for c in calls if c.result is not None or c.position in answered}
    found: list[tuple[Position, str]] = [parted] if parted is not None else []
    reproduced = 0
    for position in sorted(set(made) | set(answered)):
        a, call, entry = answered.get(position), made.get(position), recorded.get(position)
        if a is not None and a.miss:
            found.append((position, f"{a} is a replay {a.miss} ({a.why})"))
        elif a is not None or (call is not None and entry is not None and call.key == entry.key):
            reproduced += 1
        elif call is not None:
            shown = Answered(position, call.name, call.key[1])
            had = f"{entry.tool}({entry.arguments})" if entry is not None else "no call"
            why = f"answered by the runtime ({call.kind or 'ok'}); the recorded run had {had}"
            found.append((position, f"{shown} was {why}"))
    for position in sorted(set(recorded) - set(made) - set(answered)):
        entry = recorded[position]
        never = Answered(position, entry.tool, entry.arguments)
        if any(p > position for p in [*made, *answered]):
            text = f"skipped a recorded call ({reproduced} of {len(recorded)} made)"
        else:
            text = f"stopped after {reproduced} of {len(recorded)} recorded calls"
        found.append((position, f"{text} ({never} was never made)"))
    first = min(found, default=None)
    return Replayed(len(recorded), len(made), reproduced, first[1] if first else "")


def annotate_replay(record: RunRecord, found: Replayed) -> Replayed:
    """Say how the replaying run of ``record`` went: the one place this is written."""
    if record.annotations is None:
        record.annotations = {}
    record.annotations[KEY] = found
    return found


def replayed(record: RunRecord) -> Replayed | None:
    """How the replaying run of ``record`` went (None: it did not replay, or was not judged);
    read back from a file as its dict."""
    found = (record.annotations or {}).get(KEY)
    if found is None or isinstance(found, Replayed):
        return found
    return Replayed.from_dict(found)


def difference(record: RunRecord, otherwise: str = "") -> str:
    """Where the replaying run of ``record`` first differed from its recording ("" when it
    reproduced it); ``otherwise`` when it was not judged."""
    found = replayed(record)
    return found.difference if found is not None else otherwise
