"""Evaluation: the runs of every variant on every task, repeated, and what they mean.

It fills in while the sweep runs (``records`` grows, subscribers hear each finished run)
and answers questions afterwards: ``runs`` and ``summary`` (DataFrames), ``flakiness``,
``compare(a, b)`` (paired statistics), ``session(variant, task, repeat)``, ``save``/``load``
(no model needed to reload), ``rerun``, ``plot`` and ``diff``. Evaluating it in a notebook
cell shows the live matrix (``agentnb.widgets.EvalMatrix``) when the widgets are installed,
else a static table. It is a view over ``session.runs``: each row (:class:`EvalRecord`) reads
the record of its run, tagged with the row and annotated with its checks, when asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import warnings
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from .. import display
from ..errors import ConfigurationError
from . import tables
from .record import EvalRecord
from .rows import records_of
from .tasks import Task, TaskSet

if TYPE_CHECKING:
    import pandas as pd

    from ..agent import Agent
    from ..session import Session
    from ..storage import Trace
    from .agreement import Agreement
    from .cache import ResponseCache
    from .comparison import Comparison
    from .labels import Label
    from .outputs import Outputs

__all__ = ["Evaluation"]

Errors = Literal["fail", "drop"]


class Kept(NamedTuple):
    """What an evaluation keeps of one run besides its record."""

    session: Session | None
    trace: Trace | None
    state: Any


class Evaluation(display.Shown):
    """The records of one sweep (see the module docstring); made by :func:`agentnb.evaluate`.

    ``errors="fail"`` counts an ``error`` run as not passed (it stays in every denominator);
    ``errors="drop"`` leaves error runs out of rates, intervals and pairs (they are still
    counted in the ``errors`` column). The summary's caption says which.
    """

    def __init__(
        self,
        variants: dict[str, Agent | None] | dict[str, Agent] | Iterable[str],
        tasks: TaskSet | Iterable[Task],
        repeats: int = 1,
        *,
        seed: int = 0,
        errors: Errors = "fail",
        concurrency: int = 8,
        timeout: float | None = 300.0,
        cache: ResponseCache | None = None,
    ) -> None:
        if errors not in ("fail", "drop"):
            raise ConfigurationError(f"errors must be 'fail' or 'drop', not {errors!r}")
        if repeats < 1 or concurrency < 1:
            raise ConfigurationError("repeats and concurrency must be at least 1")
        given = variants.items() if isinstance(variants, dict) else ()
        #: The agent of each variant (none for a loaded evaluation).
        self.agents: dict[str, Agent] = {k: a for k, a in given if a is not None}
        #: The variant names, in the order given.
        self.variants: list[str] = list(variants)
        self.tasks: TaskSet = tasks if isinstance(tasks, TaskSet) else TaskSet(tasks)
        self.repeats = repeats
        self.seed = seed
        self.errors: Errors = errors
        self.concurrency = concurrency
        self.timeout = timeout
        self.cache = cache
        #: One row per finished run, in the order they finished: each a view of the run's
        #: record (``session.runs``), its figures read from it when asked.
        self.records: list[EvalRecord] = []
        self._rows: dict[tuple[str, str, int], EvalRecord] = {}
        #: What each variant was (instructions, model, tool descriptions), also after load.
        self.descriptions: dict[str, dict[str, Any]] = {
            name: tables.describe(agent) for name, agent in self.agents.items()
        }
        self._sessions: dict[tuple[str, str, int], Session] = {}
        self._traces: dict[tuple[str, str, int], Trace] = {}
        self._states: dict[tuple[str, str, int], Any] = {}
        self._subscribers: list[Callable[[EvalRecord | None], Any]] = []
        self._task: asyncio.Task[Any] | None = None
        #: True once the sweep ended (finished or cancelled); a loaded evaluation is done.
        self.done = False
        self.cancelled = False
        #: Its entry in the experiment log once recorded (:mod:`agentnb.evals.log`), else None.
        self.experiment: Any = None
        #: Checks flagged by their agreement with people: name -> why (``agreement``).
        self.flags: dict[str, str] = {}

    # -- the sweep ------------------------------------------------------------------------
    @property
    def total(self) -> int:
        """How many runs the sweep makes: variants × tasks × repeats."""
        return len(self.variants) * len(self.tasks) * self.repeats

    def subscribe(self, callback: Callable[[EvalRecord | None], Any]) -> Callable[[], None]:
        """Call ``callback(record)`` for each run that finishes from now on, then
        ``callback(None)`` once the sweep ends or is cancelled (at once, if it already has).
        Records already there (kept by ``extend``/``rerun``) are in ``records``. Returns a
        function that unsubscribes."""
        self._subscribers.append(callback)
        if self.done:
            self._tell(callback, None)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _tell(
        self, callback: Callable[[EvalRecord | None], Any], record: EvalRecord | None
    ) -> None:
        try:
            callback(record)
        except Exception as exc:  # a broken view never stops the sweep
            warnings.warn(
                f"evaluation subscriber {callback!r} raised {exc!r}", RuntimeWarning, stacklevel=2
            )

    def add(
        self,
        record: EvalRecord,
        session: Session | None = None,
        trace: Trace | None = None,
        state: Any = None,
    ) -> None:
        """Add a finished run (its record, session, trace and the end state its checks read)
        and tell the subscribers: the sweep does, and so do ``load``, ``rerun`` and
        ``extend`` for the runs they keep."""
        key = record.key
        self.records.append(record)
        self._rows[key] = record
        if state is not None:
            self._states[key] = state
        if session is not None:
            self._sessions[key] = session
        if trace is not None:
            self._traces[key] = trace
        for callback in list(self._subscribers):
            self._tell(callback, record)

    def add_variant(self, name: str, agent: Agent) -> None:
        """Add a variant whose runs will be added later (the optimiser's candidates)."""
        if name in self.variants:
            raise ConfigurationError(f"variant {name!r} is already in this evaluation")
        self.variants.append(name)
        self.agents[name] = agent
        self.descriptions[name] = tables.describe(agent)

    def drive(self, sweep: Awaitable[Any]) -> None:
        """Run ``sweep`` (the coroutine filling this evaluation) as its background task: ``wait``
        awaits it, ``cancel`` stops it, and its end calls :meth:`finish`, also when it was
        cancelled before it began."""
        self._task = asyncio.ensure_future(sweep)
        self._task.add_done_callback(lambda _: self.finish())

    def finish(self) -> None:
        """Mark the sweep ended (done, or cancelled) and tell the subscribers; once only."""
        if self.done:
            return
        self.done = True
        for callback in list(self._subscribers):
            self._tell(callback, None)

    async def wait(self) -> Evaluation:
        """Wait for the sweep to end (a cancelled sweep ends too); returns ``self``."""
        if self._task is not None and not self.done:
            try:
                await asyncio.shield(self._task)
            except asyncio.CancelledError:
                if not self.cancelled:
                    raise
        return self

    def __await__(self) -> Any:
        return self.wait().__await__()

    def cancel(self) -> None:
        """Stop the sweep: runs in flight are cancelled and not recorded; records stay."""
        self.cancelled = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
        else:
            self.finish()

    def kept(self, record: EvalRecord) -> Kept:
        """The session, trace and end state kept for the run of ``record`` (None where there
        is none; a loaded evaluation's states are those its file kept: evals/states.py)."""
        key = record.key
        return Kept(self._sessions.get(key), self._traces.get(key), self._states.get(key))

    def subset(self, variants: Iterable[str]) -> Evaluation:
        """A finished evaluation of these variants only: their records, sessions, traces and
        agents, the same tasks, repeats, seed and error rule."""
        names = [v for v in self.variants if v in set(variants)]
        agents: dict[str, Agent | None] = {v: self.agents.get(v) for v in names}
        part = Evaluation(
            agents,
            self.tasks,
            self.repeats,
            seed=self.seed,
            errors=self.errors,
            concurrency=self.concurrency,
            timeout=self.timeout,
            cache=self.cache,
        )
        part.descriptions = {v: d for v, d in self.descriptions.items() if v in names}
        part.flags = dict(self.flags)
        for r in self.records:
            if r.variant in names:
                part.add(r, *self.kept(r))
        part.finish()
        return part

    async def rerun(self, *, failed: bool = True, errors: bool = True) -> Evaluation:
        """A new evaluation with the ``fail`` (``failed``) and ``error`` (``errors``) runs run
        again with the same seeds, and every other record kept. Needs the variants' agents."""
        from .launch import rerun

        return await rerun(self, failed=failed, errors=errors)

    def extend(self, variants: dict[str, Agent]) -> Evaluation:
        """A new evaluation, started in the background, holding this one's records and the
        runs of ``variants`` (new names) on the same tasks, repeats and seeds: the next edit
        of a prompt, compared with the earlier ones. ``await`` it, or show it."""
        from .launch import extend

        return extend(self, variants)

    @classmethod
    def start(cls, *args: Any, **kwargs: Any) -> Evaluation:
        """The same as :func:`agentnb.evals.start`: the sweep in the background."""
        from .launch import begin

        return begin(cls, *args, **kwargs)

    @classmethod
    def from_records(
        cls,
        records: Iterable[EvalRecord | dict[str, Any]],
        *,
        tasks: TaskSet | Iterable[Task] | None = None,
        errors: Errors = "fail",
        seed: int = 0,
    ) -> Evaluation:
        """A finished evaluation of these rows (no agents; each row keeps the session it
        reads, if any): for results made elsewhere (``EvalRecord(...)`` or its dict, built by
        hand), and for checking the statistics on hand-built outcomes. Variants, tasks and
        repeats are read from the rows unless ``tasks`` is given."""
        rows = [r if isinstance(r, EvalRecord) else EvalRecord.from_dict(r) for r in records]
        variants = list(dict.fromkeys(r.variant for r in rows))
        if tasks is None:
            tasks = [Task(name, "") for name in dict.fromkeys(r.task for r in rows)]
        repeats = max((r.repeat for r in rows), default=0) + 1
        ev = cls(variants, tasks, repeats, errors=errors, seed=seed)
        for r in rows:
            ev.add(r, r.session)
        ev.finish()
        return ev

    @classmethod
    def from_sessions(
        cls,
        sessions: Iterable[Session],
        *,
        tasks: TaskSet | Iterable[Task] | None = None,
        errors: Errors = "fail",
        seed: int = 0,
    ) -> Evaluation:
        """A finished evaluation of the runs these sessions hold, tagged with their row
        (``variant``, ``task``, ``repeat``, ``seed``) and checked
        (:func:`agentnb.evals.records_of`): the evaluation of runs made elsewhere, e.g. as a
        service's tasks. Each row keeps its session."""
        return cls.from_records(records_of(sessions), tasks=tasks, errors=errors, seed=seed)

    # -- reading ----------------------------------------------------------------------------
    def record(self, variant: str, task: Task | str, repeat: int = 0) -> EvalRecord:
        """The record of one run (``KeyError`` when it has not finished)."""
        key = (variant, task.name if isinstance(task, Task) else task, repeat)
        found = self._rows.get(key)
        if found is None:
            raise KeyError(f"no finished run {key}; variants: {self.variants}")
        return found

    def session(self, variant: str, task: Task | str, repeat: int = 0) -> Session:
        """The session of one run (evaluating it shows its live view)."""
        key = self.record(variant, task, repeat).key
        session = self._sessions.get(key)
        if session is None:
            raise KeyError(f"run {key} kept no session (it failed before starting)")
        return session

    def trace(self, variant: str, task: Task | str, repeat: int = 0) -> Trace:
        """The events of one run's last turn: ``.save(path)`` keeps it, and
        ``an.testing.replay(trace, agent)`` replays it as a regression test."""
        key = self.record(variant, task, repeat).key
        if key not in self._traces:
            raise KeyError(f"run {key} kept no trace (it failed before starting)")
        return self._traces[key]

    @property
    def runs(self) -> pd.DataFrame:
        """One row per finished run: outcome, failed checks, stop reason and metrics."""
        return tables.runs_frame(self)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per variant: rates with 95% intervals, pass@k, pass^k, flakiness, costs.

        Wilson intervals over runs when ``repeats == 1``; a task-clustered bootstrap when
        ``repeats > 1`` (the ``ci_method`` column and ``.attrs["caption"]`` say which, and
        how errors count)."""
        return tables.summary_frame(self)

    @property
    def flakiness(self) -> pd.DataFrame:
        """One row per (variant, task): passes of k repeats, ``k/k``·``j/k``·``0/k``, the
        number of distinct answers."""
        return tables.flakiness_frame(self)

    def outputs(self, *, failed: bool = False) -> Outputs:
        """Every answer, task × variant, repeats stacked, failed runs marked: evaluating it
        in a notebook shows the grid (first lines, the rest a click away); ``.frame`` is the
        DataFrame (see :mod:`agentnb.evals.outputs`). ``failed=True``: only the tasks where
        some run did not pass, every variant beside them."""
        from .outputs import Outputs

        if not failed:
            return Outputs(self)
        return Outputs(self, tuple({r.task for r in self.records if r.outcome != "pass"}))

    def compare(
        self,
        baseline: str,
        other: str,
        *,
        margin: float | None = None,
        alpha: float = 0.05,
        noise: Any = None,
    ) -> Comparison:
        """Paired comparison of two variants by (task, repeat): see :class:`Comparison`.
        ``margin`` adds non-inferiority and equivalence (TOST) within ±margin; ``alpha`` is
        the level of every test and of the (1 - alpha) interval; ``noise``: the baseline's
        :func:`~agentnb.evals.noise` floor (a difference within it is "underpowered");
        ``.verdict`` says it in one line."""
        from .comparison import compare

        found = compare(self, baseline, other, margin=margin, alpha=alpha)
        if noise is None:
            return found
        return dataclasses.replace(found, underpowered=noise.within(found))

    # -- people and checks after the runs (labels, agreement, rescore) ----------------------
    def label(
        self,
        variant: str,
        task: Task | str,
        repeat: int,
        verdict: Any,
        note: str = "",
        *,
        rater: str = "human",
    ) -> Label | None:
        """A person's verdict on one run, ``"pass"`` or ``"fail"`` with a note (None removes
        it): an annotation on its record, kept by ``save`` and the experiment log (written
        back there at once). See :mod:`agentnb.evals.labels`."""
        from .labels import label

        row = self.record(variant, task, repeat)
        made = label(row.run, verdict, note, rater=rater)
        if self.experiment is not None:  # in the experiment log: written back there
            self.experiment.rewrite(row)
        return made

    @property
    def labels(self) -> pd.DataFrame:
        """Every label: variant, task, repeat, rater, verdict, note, and the run's outcome."""
        from .labels import labels_frame

        return labels_frame(self)

    def agreement(
        self, *raters: str, threshold: float | None = None, confidence: float = 0.95
    ) -> Agreement:
        """How far raters agree on these runs: ``ev.agreement("judge", "human")`` (Cohen's
        kappa with its interval, the confusion table, the runs they disagree on), three raters
        or more by Krippendorff's alpha; with ``threshold``, a check below it is flagged
        wherever its verdicts show. See :mod:`agentnb.evals.agreement`."""
        from .agreement import agreement

        return agreement(self, *raters, threshold=threshold, confidence=confidence)

    async def rescore(
        self,
        checks: Any = None,
        tasks: Any = None,
        *,
        judge: Any = None,
        log: Any = None,
        note: str = "",
    ) -> Evaluation:
        """A new evaluation of these runs checked again, without running any agent model:
        ``checks`` (for every task, or ``{task: [...]}``), edited ``tasks`` (their checks, by
        name) or the tasks' own checks; a judge calls only its model (``judge=``), metered.
        Recorded in the experiment log, linked to this one. See :mod:`agentnb.evals.rescore`."""
        from .rescore import rescore

        return await rescore(self, checks, tasks, judge=judge, log=log, note=note)

    # -- files, pictures, views -----------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], *, traces: bool = True) -> Path:
        """Write records, checks, tasks, every run's messages (and trace) to one JSONL file,
        content shared between runs stored once. Refuses, naming them, checks it cannot keep
        (a notebook's functions are kept by their source)."""
        from .saving import save

        return save(self, Path(path), traces=traces)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, judge: Any = None, trust: bool = False
    ) -> Evaluation:
        """Read a file written by :meth:`save`; no model is needed (``rerun`` is not possible
        without the agents). ``judge``: the model of judge checks; ``trust=True`` runs checks
        that were saved by their source (a notebook's functions); without it they are kept
        as placeholders, re-attached with ``ev.tasks.attach({name: fn})``."""
        from .saving import load

        return load(cls, Path(path), judge=judge, trust=trust)

    def plot(self, **options: Any) -> Any:
        """Success rate with its interval per variant, and the task × variant grid
        (matplotlib, imported here only); returns the figure."""
        from .plot import plot

        return plot(self, **options)

    def diff(self, task: Task | str, variants: Iterable[str] | None = None, repeat: int = 0) -> Any:
        """``agentnb.widgets.TrajectoryDiff`` of this task's runs (all variants by default)."""
        return display.view(self, "diff", task, variants, repeat)

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        counts = {o: sum(r.outcome == o for r in self.records) for o in ("pass", "fail", "error")}
        return (
            f"<Evaluation {len(self.variants)} variants × {len(self.tasks)} tasks × "
            f"{self.repeats} repeats: {len(self.records)}/{self.total} runs {state} "
            f"({counts['pass']} pass, {counts['fail']} fail, {counts['error']} error)>"
        )

    def static_bundle(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """The summary with its caption and the task × variant grid (what nbviewer shows;
        in a kernel with the widgets, the live matrix shows it: :mod:`agentnb.display`)."""
        from .view import static_bundle

        return static_bundle(self, include=include, exclude=exclude)
