"""Re-scoring: the runs an evaluation already made, checked again, with no agent model called.

    again = await ev.rescore(checks=[an.checks.answer_contains("°C")])     # every task
    again = await ev.rescore(checks={"weather-fri": [an.checks.grounded()]})
    again = await ev.rescore(tasks=edited_task_set)          # the edited tasks' checks, by name
    again = await ev.rescore(checks=[an.checks.judge(model, rubric)])   # only the judge runs
    again.compare ...; again.experiment.source               # linked to where it came from

Each run is read back as it was (its record, its messages, its trace and end state where
they were kept) and the checks ask their question of it again; the new evaluation's rows are
copies of the runs' records, annotated with what the new checks found (the source keeps its
own). So ``compare`` reads old and new outcomes of the very same runs, and the experiment log
records the rescore linked to its source (its runs' sessions are not stored again).

A judge calls its own model only (``judge=`` gives one to judges read back without it), and
is metered: ``again.judge_runs`` holds the record of its calls (tokens, spend). A run that
never started stays the error it was; a run's own error (a timeout) stays too, while what a
check said is asked again.

**Refused by name**, before or while checking: an end-state check (``end_state``,
``answer_and_state``) on runs whose end state was not kept (an evaluation read from a file
or the log: states are objects of the process that made the runs); a check that reads the
run's events when no trace was kept; a judge with no model; a task's own check that the log
could not keep (a lambda); an edited task whose input is not what the runs answered.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..models import Usage
from ..runtime import RunResult
from ..session import RunRecord, Session, new_run_id, new_trace_id
from .checked import Checked, annotate, checked
from .checks.base import Check, Evidence, as_check
from .checks.judge import Judge
from .checks.outcome import EndState
from .record import EvalRecord
from .runner import check
from .tasks import Task, TaskSet
from .turns import turns_of

if TYPE_CHECKING:
    from .evaluation import Evaluation

__all__ = ["NOT_KEPT", "rescore"]

#: How a check that read what the runs did not keep is recognised (and refused, named).
NOT_KEPT = "not kept by these runs"


class _Unkept(list[Any]):
    """The events of a run whose trace was not kept: reading them raises, naming why."""

    def _refuse(self, *_: Any) -> Any:
        raise ConfigurationError(
            f"the run's events are {NOT_KEPT} (read from the experiment log, or saved with "
            "traces=False): rescore where the runs were made, or from a file saved with traces"
        )

    __iter__ = __len__ = __getitem__ = __bool__ = _refuse


class _Metered:
    """A judge's model, each call counted on one record (tokens, calls, the model's name)."""

    def __init__(self, model: Any, record: RunRecord) -> None:
        self.model, self.record = model, record
        self.name = str(getattr(model, "name", type(model).__name__))

    async def complete(self, request: Any) -> Any:
        reply = await self.model.complete(request)
        usage, record = getattr(reply, "usage", None), self.record
        record.iterations += 1
        record.unmetered += usage is None
        record.usage = record.usage + (usage or Usage(estimated=True))
        record.model = getattr(reply, "model", None) or self.name
        return reply


def _tasks(ev: Evaluation, checks: Any, tasks: Any) -> TaskSet:
    """The tasks to rescore, each with the checks it is rescored with."""
    chosen = list(ev.tasks)
    if tasks is not None:
        given = [tasks] if isinstance(tasks, Task | str) else list(tasks)
        unknown = [t if isinstance(t, str) else t.name for t in given]
        unknown = [n for n in unknown if n not in ev.tasks]
        if unknown:
            raise ConfigurationError(f"tasks {unknown} are not tasks of this evaluation")
        chosen = []
        for t in given:
            old = ev.tasks[t if isinstance(t, str) else t.name]
            if isinstance(t, Task) and (t.input, t.history) != (old.input, old.history):
                raise ConfigurationError(
                    f"task {t.name!r}: its input is not what these runs answered; rescoring "
                    "judges the runs that were made: evaluate the edited task instead"
                )
            chosen.append(t if isinstance(t, Task) else old)
    if isinstance(checks, dict):
        unknown = [n for n in checks if n not in {t.name for t in chosen}]
        if unknown:
            raise ConfigurationError(f"checks for {unknown}: not tasks being rescored")
        chosen = [
            t.model_copy(update={"checks": _checks(checks[t.name])}) if t.name in checks else t
            for t in chosen
        ]
    elif checks is not None:
        new = _checks(checks)
        chosen = [t.model_copy(update={"checks": new}) for t in chosen]
    return TaskSet(chosen, name=ev.tasks.name)


def _checks(value: Any) -> tuple[Check, ...]:
    items = [value] if isinstance(value, Check) or callable(value) else list(value)
    return tuple(as_check(c) for c in items)


def _refuse(ev: Evaluation, tasks: TaskSet, checks: Any, judge: Any) -> None:
    """Refuse, by name, a check that needs what the runs did not keep (module docstring)."""
    unkept = (ev.experiment.body.get("unkept") or {}) if ev.experiment is not None else {}
    for t in tasks:
        own = checks is None or (isinstance(checks, dict) and t.name not in checks)
        if own and unkept.get(t.name):
            raise ConfigurationError(
                f"task {t.name!r}: the log did not keep its checks {unkept[t.name]} (they could "
                "not be written); give them again: rescore(checks={...})"
            )
        for c in t.checks:
            if isinstance(c, Judge) and c.model is None and judge is None:
                raise ConfigurationError(f"{c.name} has no model: rescore(..., judge=model)")
            if not isinstance(c, EndState):
                continue
            rows = [r for r in ev.records if r.task == t.name and r.run.start is not None]
            if any(ev.kept(r).state is None for r in rows):
                raise ConfigurationError(
                    f"{c.name} reads the state after each run, which was {NOT_KEPT} (an "
                    "evaluation read from a file or the log keeps no end states: they are "
                    "objects of the process that made the runs); rescore it there, or leave it out"
                )


async def rescore(
    ev: Evaluation,
    checks: Any = None,
    tasks: Any = None,
    *,
    judge: Any = None,
    log: Any = None,
    note: str = "",
) -> Evaluation:
    """``ev.rescore(...)``: see the module docstring."""
    from .log.recording import chosen, record

    place = chosen(log)
    chosen_tasks = _tasks(ev, checks, tasks)
    _refuse(ev, chosen_tasks, checks, judge)
    meter = RunRecord(new_run_id(), new_trace_id(), None, tags={"rescore": "judge"})
    chosen_tasks = TaskSet(
        [t.model_copy(update={"checks": tuple(_metered(c, judge, meter) for c in t.checks)})
         for t in chosen_tasks],
        name=chosen_tasks.name,
    )  # fmt: skip
    rows = [r for r in ev.records if r.task in chosen_tasks]
    variants = [v for v in ev.variants if any(r.variant == v for r in rows)]
    new = type(ev)(variants, chosen_tasks, ev.repeats, seed=ev.seed, errors=ev.errors)
    new.descriptions = {v: ev.descriptions[v] for v in variants if v in ev.descriptions}
    gate = asyncio.Semaphore(ev.concurrency)

    async def again(row: EvalRecord) -> tuple[EvalRecord, Session | None, Any, Any]:
        async with gate:
            return await _again(ev, row, chosen_tasks[row.task])

    for made in await asyncio.gather(*(again(r) for r in rows)):
        new.add(*made)
    new.finish()
    lost = sorted({c.name for r in new.records for c in r.checks if NOT_KEPT in c.reason})
    if lost:
        raise ConfigurationError(f"checks {lost} read what the runs did not keep: {lost[0]}: "
                                 + next(c.reason for r in new.records for c in r.checks
                                        if NOT_KEPT in c.reason))  # fmt: skip
    new.judge_runs = [meter] if meter.iterations else []  # type: ignore[attr-defined]
    if place is not None:
        source = ev.experiment.id if ev.experiment is not None else None
        rescored = {"checks": sorted({c.name for t in chosen_tasks for c in t.checks})}
        record(new, place, kind="rescore", note=note, source=source,
               extra={"rescored": rescored, "judge_calls": meter.iterations})  # fmt: skip
    return new


def _metered(c: Check, judge: Any, meter: RunRecord) -> Check:
    if not isinstance(c, Judge):
        return c
    return dataclasses.replace(c, model=_Metered(c.model if c.model is not None else judge, meter))


async def _again(
    ev: Evaluation, row: EvalRecord, task: Task
) -> tuple[EvalRecord, Session | None, Any, Any]:
    """One run checked again: a copy of its records on a copy of its session (the same id:
    the log links the stored one), annotated with what ``task``'s checks found now."""
    kept = ev.kept(row)
    runs = [dataclasses.replace(r) for r in row.runs]
    for r in runs:
        r.annotations = dict(r.annotations) if r.annotations is not None else None
    last = runs[-1]
    session = None
    if kept.session is not None:
        session = Session(kept.session.wire(), id=kept.session.id)
        session.runs.extend(r for r in runs if r.start is not None)
    before = checked(row.run) or Checked("error", (), "the run was not checked")
    if session is None or last.start is None:  # it never ran: the error it was
        annotate(last, before)
        return EvalRecord.of(last, session), session, kept.trace, kept.state
    own = before.error if not before.error.startswith("check ") else ""
    end = last.end if last.end >= 0 else None
    events = kept.trace.events if kept.trace is not None else _Unkept()
    result = RunResult(last, session, events, list(session.messages[last.start : end]))
    talked = turns_of(session, last)  # a conversation's turns, read from its runs' records
    annotate(last, await check(Evidence(result, kept.state, task, talked), ev.timeout, own))
    return EvalRecord.of(last, session), session, kept.trace, kept.state
