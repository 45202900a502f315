"""Tool recordings: replay recorded tool results so an evaluation never fires a side effect.

    rec = an.ToolRecording.from_evaluation(ev)        # or .from_sessions([session, ...])
    offline = agent.replaying(rec)                    # tools answer from the recording
    ev2 = await an.evaluate({"a": offline}, tasks)    # each run replays its own trajectory

Every recorded result keeps where it came from: the run (``variant``, ``task``, ``repeat``),
its position in that run (``turn``, ``step``, ``index``: see :mod:`.batches`), the tool and
its canonical arguments. A replaying run is answered **from its own trajectory**: the call
at turn *t*, step *s*, place *i* gets the result recorded at that position of the same run
(inside an evaluation, the run of the same task and repeat; of the same variant name, or
``variant=`` given, or the recording's only variant; a recording of one run answers every
replay from that run). A call the recording holds elsewhere is
never served silently; the model gets an error result naming turn and step:

* ``mismatch`` - the recorded run made another call at this position (another tool, other
  arguments): the replay diverged;
* ``exhausted`` - the recorded run made no call here (the replay went further);
* ``not_recorded`` - the recording holds no run for this one at all.

A conversation's user turns are recorded with its run (:attr:`ToolRecording.replies`) and
replayed like tool results: a replaying agent's user is never asked, its turn *k* is the
recorded one, given only to the answer it was recorded after (else the conversation stops on
that turn with the replay's ``mismatch``; see :mod:`agentnb.evals.conversation`).

``match="arguments"`` falls back, after such a miss, on the arguments pool: a recorded result
of the same tool with the same canonical arguments (the run's own first, then any run's, in
order). ``missing="live"`` runs the real tool instead of answering an error. Arguments
compare as the replaying tool validated them (defaults filled in). Every answered call is
recorded, errors included (a ``ToolError`` such as "unknown city", a timeout), and replayed
as the run saw it. :attr:`ToolRecording.misses` lists every miss with its position.

A replay is judged on what it did (:mod:`.faithful`): its end-state checks read the end
state the recorded run left (:attr:`ToolRecording.states`; ``from_evaluation`` keeps them,
``save``/``load`` keep them in the file as :mod:`.states` can) only when it reproduced that
run exactly and completely; otherwise, or when the recording keeps no end state of the run,
they are refused naming why, and the row's ``divergence`` says where it first differed.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..storage import dumps, write_atomically
from .batches import batches
from .normalise import canonical
from .replayer import Match, Miss, Missing, Replayer, RunKey
from .states import Refused, dump_state, is_state, load_state
from .turns import user_turns
from .user.turn import UserTurn

if TYPE_CHECKING:
    from ..tools import Tool

__all__ = ["Miss", "Recorded", "ToolRecording"]


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded result and where it came from."""

    tool: str
    arguments: str  # canonical JSON
    result: str
    variant: str = ""
    task: str = ""
    repeat: int = 0
    turn: int = -1  # -1: no position (a hand-made entry): answers by arguments only
    step: int = -1
    index: int = -1

    @property
    def run(self) -> RunKey:
        return self.variant, self.task, self.repeat

    @property
    def position(self) -> tuple[int, int, int]:
        return self.turn, self.step, self.index

    @property
    def key(self) -> tuple[str, str]:
        """``(tool, canonical arguments)``, as :attr:`PairedCall.key` reads a call."""
        return self.tool, self.arguments


class ToolRecording:
    """Recorded tool results with their provenance; see the module docstring."""

    def __init__(self, entries: Iterable[Recorded | tuple[str, Any, str]] = ()) -> None:
        self.entries: list[Recorded] = []
        for entry in entries:
            if isinstance(entry, Recorded):
                self.entries.append(entry)
            else:
                self.add(*entry)
        #: Calls a replaying agent did not answer from its own trajectory, in order.
        self.misses: list[Miss] = []
        #: How many calls were answered from the recording.
        self.hits = 0
        #: The end state each recorded run left (what its end-state checks read), by run: a
        #: replay that reproduces the run reads it (a :class:`~agentnb.evals.states.Refused`
        #: where it could not be kept says why not).
        self.states: dict[RunKey, Any] = {}
        #: The user's turns of each recorded conversation (UserTurn), by run.
        self.replies: dict[RunKey, list[Any]] = {}

    def add(self, tool: str, arguments: Any, result: str, **where: Any) -> None:
        """Record that ``tool(arguments)`` returned ``result`` (a tool message's content);
        ``where``: ``variant``, ``task``, ``repeat``, ``turn``, ``step``, ``index``. An entry
        without a position answers only by its arguments (``match="arguments"``)."""
        self.entries.append(Recorded(tool, canonical(arguments), result, **where))

    @classmethod
    def from_sessions(
        cls, sessions: Iterable[Any], *, runs: Iterable[RunKey] | None = None
    ) -> ToolRecording:
        """Every answered tool call of these sessions (or run results, or message lists),
        each session one run: ``runs`` names them ``(variant, task, repeat)`` (by default
        ``("", "session-<i>", 0)``)."""
        recording = cls()
        names = iter(runs) if runs is not None else None
        for i, source in enumerate(sessions):
            variant, task, repeat = next(names) if names is not None else ("", f"session-{i}", 0)
            messages = getattr(source, "messages", source)
            said = user_turns(source)
            if said:
                recording.replies[variant, task, repeat] = said
            for batch in batches(messages):
                for call in batch:
                    if call.result is not None:
                        recording.add(
                            call.name,
                            call.arguments,
                            call.result,
                            variant=variant,
                            task=task,
                            repeat=repeat,
                            turn=call.turn,
                            step=call.step,
                            index=call.index,
                        )
        return recording

    @classmethod
    def from_evaluation(
        cls, evaluation: Any, variants: Iterable[str] | None = None
    ) -> ToolRecording:
        """Every answered tool call of an evaluation's runs (of ``variants``, or all), each
        keyed by its run."""
        chosen = set(variants) if variants is not None else None
        kept = [
            (r.key, k)
            for r in evaluation.records
            if (chosen is None or r.variant in chosen) and (k := evaluation.kept(r)).session
        ]
        recording = cls.from_sessions([k.session for _, k in kept], runs=[key for key, _ in kept])
        for key, k in kept:
            if is_state(k.state):
                recording.states[key] = _copied(k.state)
        return recording

    @property
    def runs(self) -> list[RunKey]:
        """The runs recorded, in order of appearance."""
        return list(dict.fromkeys(e.run for e in self.entries))

    def source(
        self,
        missing: Missing = "not_recorded",
        match: Match = "trajectory",
        *,
        variant: str | None = None,
        run: RunKey | None = None,
    ) -> Replayer:
        """What answers a replaying agent's calls (``agent.replaying(recording, ...)``).

        ``missing="live"`` runs a call the recording cannot answer; ``match="arguments"``
        first tries the arguments pool; ``variant`` names the recorded variant to replay
        (default: the evaluation variant of the same name, else the only one); ``run`` fixes
        the run outside an evaluation (default: the only run recorded)."""
        if missing not in ("not_recorded", "live"):
            raise ConfigurationError(f"missing must be 'not_recorded' or 'live', not {missing!r}")
        if match not in ("trajectory", "arguments"):
            raise ConfigurationError(f"match must be 'trajectory' or 'arguments', not {match!r}")
        return Replayer(self, missing, match, variant, run)

    def results(self, tool: Tool | str, key: str) -> list[str]:
        name = tool if isinstance(tool, str) else tool.name
        return [e.result for e in self.entries if e.tool == name and e.arguments == key]

    # -- files -----------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """One JSON object per line: each result and where it came from, each conversation's
        user turns (``{"run", "replies"}``), then each recorded run's end state (``{"variant",
        "task", "repeat", "state"}``; one JSON cannot keep exactly is written ``"unsaved"``
        with the reason: see :mod:`agentnb.evals.states`)."""
        lines = [dumps(asdict(e)) for e in self.entries]
        lines += [dumps({"run": list(run), "replies": [t.to_dict() for t in turns]})
                  for run, turns in self.replies.items()]  # fmt: skip
        for (variant, task, repeat), state in self.states.items():
            where = {"variant": variant, "task": task, "repeat": repeat}
            lines.append(dumps({**where, **dump_state(state)}))
        return write_atomically(Path(path), "\n".join(lines) + ("\n" if lines else ""))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ToolRecording:
        """A recording :meth:`save` wrote: its results and the end states it kept (a state
        it could not keep, or a file of an earlier agentnb that kept none, makes a replay's
        end-state checks refused, naming why)."""
        entries, states, replies = [], {}, {}
        text = Path(path).read_text(encoding="utf-8")
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if "replies" in data:  # a conversation's user turns
                    variant, task, repeat = data["run"]
                    replies[str(variant), str(task), int(repeat)] = [
                        UserTurn.from_dict(t) for t in data["replies"]
                    ]
                elif "state" in data or "unsaved" in data:
                    states[data["variant"], data["task"], int(data["repeat"])] = load_state(data)
                else:
                    entries.append(Recorded(**data))
            except (ValueError, TypeError, KeyError, ConfigurationError) as exc:
                raise ConfigurationError(
                    f"{path}:{number}: not a recorded result or end state ({exc})"
                ) from None
        recording = cls(entries)
        recording.states.update(states)
        recording.replies = replies
        return recording

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        tools = sorted({e.tool for e in self.entries})
        return (
            f"<ToolRecording {len(self)} results of {len(self.runs)} runs "
            f"({', '.join(tools) or 'no tools'})>"
        )


def _copied(state: Any) -> Any:
    """A copy of ``state`` the recording keeps, or a Refused saying why it could not."""
    try:
        return copy.deepcopy(state)
    except Exception as exc:
        return Refused(f"its end state could not be copied ({type(exc).__name__}: {exc})")
