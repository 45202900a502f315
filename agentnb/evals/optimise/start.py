"""``an.optimize(...)`` and ``an.evals.optimise.start(...)``: settings checked, tasks split,
the floor warning given, the loop started (in the background) and, in a notebook, shown."""

from __future__ import annotations

import asyncio
import random
import sys
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ... import display
from ...errors import ConfigurationError, RunStateError
from ...runtime import seconds
from ..launch import as_cache, as_tasks
from ..progress import ProgressLine
from ..statistics import warm_up
from ..tasks import Task, TaskSet
from .budget import BudgetWarning, budget_plan
from .candidate import Candidate, Texts
from .gate import check
from .logged import floor_option, follow_optimisation
from .loop import search
from .optimisation import Optimisation
from .wording import counted

if TYPE_CHECKING:
    from ...agent import Agent

__all__ = ["optimize", "split", "start"]


def split(tasks: TaskSet, validation: float, seed: int = 0) -> tuple[TaskSet, TaskSet]:
    """Training and validation tasks: ``validation`` of them held out, stratified by tags.

    The tasks are ordered by their tags (each group shuffled with ``seed``) and every
    ``1/validation``-th one is held out from a seeded offset, so each kind of task lands on
    both sides in proportion."""
    if not 0 < validation < 1:
        raise ConfigurationError(f"validation must be a share between 0 and 1, not {validation!r}")
    rng = random.Random(seed)
    keyed = [(tuple(sorted(t.tags)), rng.random(), t) for t in tasks]
    keyed.sort(key=lambda k: (k[0], k[1]))
    offset = rng.random()
    held = {
        k[2].name
        for i, k in enumerate(keyed)
        if int((i + 1) * validation + offset) > int(i * validation + offset)
    }
    train = TaskSet([t for t in tasks if t.name not in held], name=tasks.name)
    val = TaskSet([t for t in tasks if t.name in held], name=tasks.name)
    return train, val


def _sets(tasks: Any, validation: Any, seed: int) -> tuple[TaskSet, TaskSet]:
    every = as_tasks(tasks)
    if isinstance(validation, TaskSet) or (
        isinstance(validation, list | tuple) and validation and isinstance(validation[0], Task)
    ):
        held = as_tasks(validation)
        both = sorted(set(every.names) & set(held.names))
        if both:
            raise ConfigurationError(f"tasks {both} are both training and validation tasks")
        train, val = every, held
    else:
        train, val = split(every, float(validation), seed)
    if len(train) < 1 or len(val) < 2:
        raise ConfigurationError(
            f"the optimiser needs training tasks and at least 2 held-out validation tasks; "
            f"it has {len(train)} and {len(val)}: give more tasks, or validation=TaskSet([...])"
        )
    return train, val


def start(
    agent: Agent,
    tasks: TaskSet | Iterable[Task | str],
    *,
    proposer: Any,
    budget: int = 150,
    validation: float | TaskSet = 0.5,
    minibatch: int = 4,
    repeats: int = 1,
    alpha: float = 0.05,
    gate: str = "tasks",
    seed: int = 0,
    patience: int = 5,
    concurrency: int = 8,
    timeout: float | None = 300.0,
    cache: Any = None,
    progress: bool | None = False,
    log: Any = None,
    note: str = "",
    noise: Any = None,
) -> Optimisation:
    """Start an optimisation in the background and return it at once (arguments as for
    :func:`optimize`); ``await opt`` waits for it, ``opt.cancel()`` stops it."""
    from ...agent import Agent

    if not isinstance(agent, Agent) or agent.model is None:
        raise ConfigurationError("optimize() needs an Agent with a model (the task model)")
    if proposer is None or not callable(getattr(proposer, "complete", None)):
        raise ConfigurationError(
            "proposer must be an agentnb model (it writes the new texts): an OpenAIModel, "
            "the local SmolLM2, or an.travel.TravelModel().proposer() offline"
        )
    gate = check(gate, alpha)
    timeout = seconds("timeout", timeout)  # 0 or -1 meant no limit, silently
    if patience < 1:
        raise ConfigurationError("patience must be at least 1")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RunStateError(
            "an.evals.optimise.start() runs in the background of a running event loop (a "
            "notebook, or inside async def); in a script use asyncio.run(an.optimize(...))"
        ) from None
    train, val = _sets(tasks, validation, seed)
    plan = budget_plan(budget, len(train), len(val), minibatch, repeats, alpha, gate)
    opt = Optimisation(
        agent,
        train,
        val,
        proposer=proposer,
        budget=budget,
        minibatch=plan.minibatch,
        repeats=repeats,
        alpha=alpha,
        gate=gate,
        seed=seed,
        patience=patience,
        concurrency=concurrency,
        timeout=timeout,
        cache=as_cache(cache),
    )
    if plan.warning:
        opt.warnings.append(plan.warning)
        warnings.warn(plan.warning, BudgetWarning, stacklevel=3)
    opt.candidates.append(Candidate("c0", Texts.of(agent), rationale="the agent as given"))
    opt.noise = floor_option(noise, repeats, val)
    follow_optimisation(opt, log, note)
    if progress or (progress is None and not display.in_kernel() and sys.stderr.isatty()):
        opt.subscribe(Progress(opt))
    warm_up()
    opt.drive(search(opt))
    return opt


async def optimize(
    agent: Agent,
    tasks: TaskSet | Iterable[Task | str],
    *,
    proposer: Any,
    budget: int = 150,
    validation: float | TaskSet = 0.5,
    minibatch: int = 4,
    repeats: int = 1,
    alpha: float = 0.05,
    gate: str = "tasks",
    seed: int = 0,
    patience: int = 5,
    concurrency: int = 8,
    timeout: float | None = 300.0,
    cache: Any = None,
    progress: bool | None = None,
    log: Any = None,
    note: str = "",
    noise: Any = None,
) -> Optimisation:
    """Improve ``agent``'s instructions and tool descriptions on ``tasks``, proving each
    promotion on held-out tasks; returns the :class:`Optimisation` (``.best``,
    ``.candidates``, ``.history``). See :mod:`agentnb.evals.optimise`.

    Args:
        agent: the agent as it is (candidate ``c0``); its model runs the tasks.
        tasks: the tasks, with their checks (a :class:`TaskSet`).
        proposer: the model that writes new texts from the failed runs (any agentnb model;
            offline: ``an.travel.TravelModel().proposer()``). Metered apart.
        budget: metric calls (scored task runs) the run may spend; a warning when it allows
            fewer than two proposals to reach the gate, an error below the start's cost.
        validation: the share of tasks held out for the gate (stratified by tags, seeded), or
            a :class:`TaskSet` of held-out tasks (then ``tasks`` are the training tasks).
        minibatch: training tasks a proposal is first tried on.
        repeats: runs per (candidate, task).
        alpha, gate: the gate's level and test (``"tasks"``: the exact test over tasks,
            each task's repeats as its pass rate, p < alpha with more tasks improved than
            regressed; ``"pairs"``: exact McNemar over (task, repeat) pairs, assuming repeats
            independent; ``"bootstrap"``: the paired (1 − alpha) interval above 0). After
            the start, a :class:`BudgetWarning` when the agent as given passes so many
            validation tasks that no candidate could be promoted (``opt.best_unproven``
            then keeps the strongest held one).
        seed: fixes the split, the parents, the minibatches and every run's seed.
        patience: steps in a row without a new candidate before the run ends.
        concurrency, timeout, cache: as for :func:`agentnb.evaluate`.
        progress: ``None``: the live view in a notebook, a progress line on a terminal;
            ``True``: the progress line; ``False``: nothing.
        log, note: where the optimisation is recorded when it ends, as for
            :func:`agentnb.evaluate` (``False``: not recorded).
        noise: the gate's noise floor (:func:`agentnb.evals.noise`): a ``NoiseFloor``, or
            ``True`` to read it from the agent as given's own validation repeats
            (``repeats`` ≥ 2); a promotion within it is held as underpowered.
    """
    opt = start(
        agent,
        tasks,
        proposer=proposer,
        budget=budget,
        validation=validation,
        minibatch=minibatch,
        repeats=repeats,
        alpha=alpha,
        gate=gate,
        seed=seed,
        patience=patience,
        concurrency=concurrency,
        timeout=timeout,
        cache=cache,
        progress=progress,
        log=log,
        note=note,
        noise=noise,
    )
    refresh = None
    if progress is None and display.in_kernel():
        if display.has_view(opt):
            refresh = display.show_live(opt)  # the live view, filling in while we wait
        else:
            opt.subscribe(Progress(opt))
    try:
        return await opt.wait()
    except asyncio.CancelledError:
        opt.cancel()
        raise
    finally:
        if refresh is not None:
            refresh()  # the saved notebook shows how the search ended, not "running: 0/150"


class Progress:
    """A progress bar on stderr: metric calls of the budget, candidates, the best (rewritten
    in place on a terminal, whole lines in a log: :class:`~agentnb.evals.progress.ProgressLine`)."""

    def __init__(self, opt: Optimisation, width: int = 24) -> None:
        self.opt, self.width, self.line = opt, width, ProgressLine()

    def __call__(self, kind: str, data: Any) -> None:
        opt = self.opt
        filled = int(self.width * min(1.0, opt.metric_calls / opt.budget))
        bar = "█" * filled + "·" * (self.width - filled)
        best = opt.best if opt.candidates else None
        val = (
            f", best {best.id} {best.validation:.0%}"
            if best and best.validation is not None
            else ""
        )
        line = (
            f"optimize [{bar}] {opt.metric_calls}/{opt.budget} metric calls · "
            f"{counted(len(opt.candidates), 'candidate')}{val} · proposer "
            f"{counted(opt.proposer_calls, 'call')}"
        )
        end = kind == "end"
        self.line.show(line, final=end, force=kind in ("step", "candidate"))
        if end:
            self.line.stream.write(f"{data}\n")
            self.line.stream.flush()
