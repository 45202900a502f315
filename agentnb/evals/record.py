"""EvalRecord: one row of an evaluation, read from the record of its run.

The run is the record (DESIGN invariant 7): an evaluation's run is an ordinary agent run on a
session of its own, its record in ``session.runs`` tagged with the row it is
(``variant``, ``task``, ``repeat``, ``seed``) and annotated with its checks
(:mod:`agentnb.evals.checked`). An :class:`EvalRecord` copies nothing: each figure is read
from those records and the session's messages when asked, so a table never disagrees with
the runs it shows.

* From the task's run (its last turn, the one the checks read): ``stop_reason``, ``output``,
  ``latency`` (on the events' clock), ``model``, its ids; ``model_calls`` (iterations),
  ``tokens`` (usage) and, from its messages, ``steps`` (replies that called tools),
  ``tool_calls``, ``tool_errors``: a conversation's over every turn.
* From every run of the row (each turn of a multi-turn task, also one that timed out or
  raised): ``prompt_tokens`` and ``completion_tokens`` (billed: replies a cache gave are
  free), ``cached_calls``, ``unmetered`` and :meth:`EvalRecord.cost`.
* From the checks' annotation: ``outcome``, ``checks``, ``error``; from the replay's
  (:mod:`agentnb.evals.faithful`), ``divergence``: where a replaying run first differed
  from its recording (or its replayed user from its recorded turns), over the whole session
  (else the first replay miss of its messages).
* A conversation's ``stop_reason`` is its own (``user_done``...), ``conversation`` its turns.

:func:`agentnb.evals.records_of` turns tagged sessions into rows (a service that ran an
evaluation's runs as its tasks, a file read back); ``EvalRecord(variant, task, repeat,
outcome, ...)`` builds a row by hand (results made elsewhere): its run is a record made from
the figures given (:mod:`agentnb.evals.handmade`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..session import RunRecord
from .batches import PairedCall, batches, left_recording
from .checked import OUTCOMES, Checked, checked
from .checks.base import CheckResult
from .cost import PriceTable, spent
from .faithful import difference
from .handmade import made_run
from .turns import row_of, stop_of, turn_runs, turns_of, user_left

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["OUTCOMES", "EvalRecord", "row_tags"]

#: Figures read from a run's messages: a row built by hand has none to read them from.
FROM_MESSAGES = ("steps", "tool_calls", "tool_errors", "divergence")


def row_tags(variant: str, task: str, repeat: int, seed: int) -> dict[str, str]:
    """The tags of an evaluation's run: the row it is (tags are text)."""
    return {"variant": variant, "task": task, "repeat": str(repeat), "seed": str(seed)}


class EvalRecord:
    """One finished run of an evaluation, one (variant, task, repeat): a read-only view of
    its ``run`` (the task's :class:`~agentnb.session.RunRecord`) and ``session`` (see the
    module docstring)."""

    __slots__ = ("_read", "run", "session")

    run: RunRecord
    session: Session | None
    #: What the messages said, and the version of the session it was read from.
    _read: tuple[Any, ...] | None

    def __init__(
        self,
        variant: str,
        task: str,
        repeat: int,
        outcome: str,
        checks: Iterable[CheckResult | Sequence[Any]] = (),
        stop_reason: str | None = None,
        steps: int = 0,
        model_calls: int = 0,
        tool_calls: int = 0,
        tool_errors: int = 0,
        tokens: int = 0,
        latency: float = 0.0,
        seed: int = 0,
        error: str = "",
        output: str | None = None,
        divergence: str = "",
        cached_calls: int = 0,
        model: str = "",
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        unmetered: int = 0,
    ) -> None:
        """A row built by hand: its run's record is made from these figures (``tokens`` the
        task run's total, ``prompt_tokens``/``completion_tokens`` what every turn billed).
        Figures read from messages (steps, tool calls and errors, divergence) cannot be
        given: with no messages they would be made up."""
        given = {"steps": steps, "tool_calls": tool_calls, "tool_errors": tool_errors}
        made_up = [f"{k}={v!r}" for k, v in {**given, "divergence": divergence}.items() if v]
        if made_up:
            raise ConfigurationError(
                f"EvalRecord({variant!r}, {task!r}, ...): {', '.join(made_up)} are read from a "
                "run's messages, and a row built by hand has none; leave them out, or read the "
                "row from its run with EvalRecord.of(session.runs[-1], session)"
            )
        figures: dict[str, Any] = {"outcome": outcome, "checks": checks, "error": error}
        figures.update(stop_reason=stop_reason, model_calls=model_calls, tokens=tokens)
        figures.update(latency=latency, output=output, cached_calls=cached_calls, model=model)
        figures.update(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        figures.update(unmetered=unmetered)
        run = made_run(figures, row_tags(variant, task, repeat, seed))
        self.run, self.session, self._read = run, None, None

    @classmethod
    def of(cls, run: RunRecord, session: Session | None = None) -> EvalRecord:
        """The row of ``run`` (tagged, and annotated with its checks) on ``session``."""
        tags = run.tags
        if "variant" not in tags or "task" not in tags or "repeat" not in tags:
            raise ConfigurationError(
                f"run {run.run_id} is not an evaluation's run: its tags {tags} name no "
                "variant, task and repeat"
            )
        row = cls.__new__(cls)
        row.run, row.session, row._read = run, session, None
        return row

    variant = property(lambda self: self.run.tags["variant"])
    task = property(lambda self: self.run.tags["task"])

    repeat = property(lambda self: int(self.run.tags["repeat"]))
    seed = property(lambda self: int(self.run.tags.get("seed", 0)))

    @property
    def key(self) -> tuple[str, str, int]:
        return self.variant, self.task, self.repeat

    # -- what its checks found ----------------------------------------------------------------
    @property
    def checked(self) -> Checked:
        """The checks' annotation (a run not checked yet is an ``error`` saying so)."""
        found = checked(self.run)
        return found if found is not None else Checked("error", (), "the run was not checked")

    @property
    def outcome(self) -> str:
        return self.checked.outcome

    @property
    def checks(self) -> list[CheckResult]:
        return list(self.checked.checks)

    @property
    def error(self) -> str:
        return self.checked.error

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def failed_checks(self) -> list[CheckResult]:
        """The checks that failed, with their reasons."""
        return [c for c in self.checked.checks if not c.passed]

    # -- what the task's run did --------------------------------------------------------------
    conversation = property(lambda self: turns_of(self.session, self.run))  # None: no user
    stop_reason = property(lambda self: stop_of(self.run))
    output = property(lambda self: self.run.output)
    model_calls = property(lambda self: sum(r.iterations for r in turn_runs(self.run, self.runs)))
    latency = property(lambda self: self.run.latency)
    model = property(lambda self: self.run.model)
    run_id = property(lambda self: self.run.run_id)
    trace_id = property(lambda self: self.run.trace_id)
    tokens = property(lambda s: sum(t.usage.total_tokens for t in turn_runs(s.run, s.runs)))

    @property
    def messages(self) -> list[Any]:
        """The messages of the task's run (its input first; a conversation's: every turn's)."""
        run, session, talk = self.run, self.session, self.conversation
        if session is None or run.start is None or talk is not None:
            return talk.messages if talk is not None else []
        return list(session.messages[run.start : run.end if run.end >= 0 else None])

    def trajectory(self) -> list[list[PairedCall]]:
        """The task run's tool calls, one list per reply (see :mod:`agentnb.evals.batches`)."""
        return batches(self.messages)

    def _from_messages(self) -> tuple[int, int, int, str]:
        """(steps, tool calls, tool errors, divergence), read from the messages once per
        version of the session (its length and edits): a table read again reads no message."""
        run, session = self.run, self.session
        if session is None:
            return 0, 0, 0, ""
        version = (len(session), session.transcript.rewrites, run.start, run.end)
        read = self._read
        if read is None or read[0] != version:
            trajectory = self.trajectory()
            calls = [c for b in trajectory for c in b]
            errors = sum(c.kind is not None for c in calls)
            read = self._read = (
                version,
                len(trajectory),
                len(calls),
                errors,
                left_recording(session.messages) or user_left(run),
            )
        return read[1], read[2], read[3], read[4]

    steps = property(lambda self: self._from_messages()[0])
    tool_calls = property(lambda self: self._from_messages()[1])
    tool_errors = property(lambda self: self._from_messages()[2])

    #: Where a replaying run first differed from its recording (see the module docstring).
    divergence = property(lambda self: difference(self.run, self._from_messages()[3]))

    # -- what every turn spent ------------------------------------------------------------------
    @property
    def runs(self) -> list[RunRecord]:
        """Every run of the row, in order: each turn of the task (its runs on the session
        tagged as this one), the task's run last."""
        run, session = self.run, self.session
        key = row_of(run.tags)  # a conversation's turns: the row's tags, each with its turn
        mine = [r for r in session.runs if row_of(r.tags) == key] if session else []
        if not any(r is run for r in mine):
            mine.append(run)
        return mine

    @property
    def prompt_tokens(self) -> int:
        return sum(r.billed.prompt_tokens for r in self.runs)

    @property
    def completion_tokens(self) -> int:
        return sum(r.billed.completion_tokens for r in self.runs)

    @property
    def cached_calls(self) -> int:
        return sum(r.cached_calls for r in self.runs)

    @property
    def unmetered(self) -> int:
        return sum(r.unmetered for r in self.runs)

    def cost(self, prices: PriceTable | None = None) -> float | None:
        """What every turn spent in USD at ``prices`` (``an.evals.prices`` by default); None
        when a price is unknown (see :func:`agentnb.evals.cost.spent`)."""
        return spent(self.runs, prices)

    # -- as data ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The row as plain data, every figure as the tables show it (read once each;
        ``cost`` at ``an.evals.prices`` as they are now, None when unknown)."""
        found = self.checked
        steps, tool_calls, tool_errors, _ = self._from_messages()
        divergence, runs = self.divergence, self.runs
        return {
            "variant": self.variant,
            "task": self.task,
            "repeat": self.repeat,
            "outcome": found.outcome,
            "checks": [list(c) for c in found.checks],
            "stop_reason": self.stop_reason,
            "steps": steps,
            "model_calls": self.model_calls,
            "tool_calls": tool_calls,
            "tool_errors": tool_errors,
            "tokens": self.tokens,
            "latency": self.latency,
            "seed": self.seed,
            "error": found.error,
            "output": self.output,
            "divergence": divergence,
            "cached_calls": sum(r.cached_calls for r in runs),
            "model": self.model,
            "prompt_tokens": sum(r.billed.prompt_tokens for r in runs),
            "completion_tokens": sum(r.billed.completion_tokens for r in runs),
            "unmetered": sum(r.unmetered for r in runs),
            "cost": spent(runs),
            "run_id": self.run_id,
            "trace_id": self.trace_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalRecord:
        """A row built by hand from :meth:`to_dict`'s data (its ids and the figures read
        from messages left out: they belong to the run it came from)."""
        fields = {k: v for k, v in data.items() if k not in ("run_id", "trace_id", "cost")}
        for name in FROM_MESSAGES:
            if not fields.get(name):
                fields.pop(name, None)
        return cls(**fields)

    def __repr__(self) -> str:
        found = self.checked
        why = "; ".join(f"{c.name}: {c.reason}" for c in self.failed_checks) or found.error
        return (
            f"<EvalRecord {self.variant}/{self.task}#{self.repeat} {found.outcome}"
            f"{' — ' + why[:100] if why else ''}>"
        )
