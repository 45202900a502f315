"""Starting a sweep: an evaluation filled in the background, by the runner or a service.

:func:`begin` is what :func:`agentnb.evals.start` does (and ``ev.rerun()`` / ``ev.extend()``
through it): it checks the arguments, builds the evaluation (of the class its caller passes:
this module needs nothing of :class:`~agentnb.evals.Evaluation` at run time, so the class can
reach it without an import cycle), and drives its runs, ``concurrency`` at a time, each
answered by :func:`~agentnb.evals.runner.run_task` or a service's workers
(:class:`~agentnb.evals.sweep.SweepRunner`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import display
from ..errors import ConfigurationError, RunStateError
from ..runtime import seconds
from .apps import App
from .cache import ResponseCache
from .log.recording import follow, kept_file
from .progress import ProgressLine
from .runner import run_task
from .statistics import warm_up
from .sweep import SweepRunner
from .tasks import Task, TaskSet

if TYPE_CHECKING:
    from ..agent import Agent
    from ..service import Runtime
    from .evaluation import Errors, Evaluation
    from .record import EvalRecord

__all__ = ["Progress", "as_cache", "as_tasks", "begin", "extend", "rerun"]


def _variants(value: Any) -> dict[str, Agent | None]:
    """Names -> agents; a name may map to None when all its runs are kept (a loaded
    evaluation being extended or rerun)."""
    from ..agent import Agent

    if isinstance(value, Agent):
        value = {value.name: value}
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        value = dict.fromkeys(value)
    if (
        isinstance(value, dict)
        and value
        and all(a is None or isinstance(a, Agent | App) for a in value.values())
    ):
        missing = [name for name, a in value.items() if isinstance(a, Agent) and a.model is None]
        if missing:
            raise ConfigurationError(f"variants {missing} have no model; give each agent one")
        return dict(value)
    raise ConfigurationError(
        "variants must map names to agents (or an.evals.App for an app not built on "
        "agentnb), e.g. {'baseline': agent, 'terse': agent.copy(instructions=...)}"
    )


def as_tasks(value: Any) -> TaskSet:
    """A :class:`TaskSet` of ``value`` (a TaskSet, tasks, or plain request strings)."""
    if isinstance(value, TaskSet):
        return value
    items = list(value)
    return TaskSet(
        t if isinstance(t, Task) else Task(f"task-{i}", str(t)) for i, t in enumerate(items)
    )


def as_cache(value: Any) -> ResponseCache | None:
    """The :class:`ResponseCache` ``cache=`` means (None/False: none; True: a new one)."""
    if value is None or value is False:
        return None
    if value is True:
        return ResponseCache()
    return value if isinstance(value, ResponseCache) else ResponseCache(value)


def begin(
    cls: type[Evaluation],
    variants: dict[str, Agent | None] | dict[str, Agent] | Agent | Iterable[str],
    tasks: TaskSet | Iterable[Task | str],
    repeats: int = 1,
    *,
    concurrency: int = 8,
    errors: Errors = "fail",
    seed: int = 0,
    timeout: float | None = 300.0,
    cache: ResponseCache | str | bool | None = None,
    progress: bool | None = False,
    keep: Iterable[tuple[Any, ...]] = (),
    runtime: Runtime | None = None,
    log: Any = None,
    note: str = "",
) -> Evaluation:
    """:func:`agentnb.evals.start` building an evaluation of class ``cls`` (given by the
    caller: :mod:`.evaluate` and :class:`Evaluation`'s own methods pass it, so this module
    needs nothing of the class at run time)."""
    agents = _variants(variants)
    timeout = seconds("timeout", timeout)  # 0 or -1 meant no limit, silently
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RunStateError(
            "an.evals.start() runs the sweep in the background of a running event loop (a "
            "notebook, or inside async def); in a script use asyncio.run(an.evaluate(...))"
        ) from None
    ev = cls(
        agents,
        as_tasks(tasks),
        repeats,
        seed=seed,
        errors=errors,
        concurrency=concurrency,
        timeout=timeout,
        cache=as_cache(cache),
    )
    done = set()
    for record, session, *more in keep:  # (record, session[, trace[, state]])
        ev.add(record, session, *more)
        done.add(record.key)
    jobs = [
        (name, task, repeat)
        for repeat in range(repeats)
        for task in ev.tasks
        for name in ev.variants
        if (name, task.name, repeat) not in done
    ]
    lacking = sorted({name for name, _, _ in jobs if agents.get(name) is None})
    if lacking:
        raise ConfigurationError(
            f"variants {lacking} have runs to make but no agent (a loaded evaluation keeps "
            "no agents): pass them, e.g. an.evaluate({name: agent, ...}, ev.tasks)"
        )
    if progress or (progress is None and not display.in_kernel() and sys.stderr.isatty()):
        ev.subscribe(Progress(ev))
    follow(ev, log, note, extra=kept_file(variants))  # a variants file (load_variants): kept
    warm_up()
    runner = SweepRunner(runtime, agents, ev.tasks, repeats, seed) if runtime else run_task
    ev.drive(_sweep(ev, jobs, runner))  # as the runtime's tasks (its workers), or here
    return ev


async def rerun(ev: Evaluation, *, failed: bool, errors: bool) -> Evaluation:
    """``ev.rerun()``: the chosen outcomes again (same seeds), every other record kept."""
    again = {o for o, on in (("fail", failed), ("error", errors)) if on}
    keep = [r for r in ev.records if r.outcome not in again]
    kept = [(r, *ev.kept(r)) for r in keep]
    return await _again(ev, {}, kept).wait()


def extend(ev: Evaluation, variants: dict[str, Agent]) -> Evaluation:
    """``ev.extend(variants)``: ev's records kept, the new variants run in the background."""
    new = _variants(variants)
    taken = sorted(set(new) & set(ev.variants))
    if taken:
        raise ConfigurationError(f"variants {taken} are already in this evaluation")
    started = _again(ev, new, [(r, *ev.kept(r)) for r in ev.records])
    started.descriptions = {**ev.descriptions, **started.descriptions}
    return started


def _again(ev: Evaluation, new: dict[str, Agent | None], kept: list[Any]) -> Evaluation:
    """A sweep on ``ev``'s tasks, repeats and settings, of its variants and ``new`` ones, the
    ``kept`` runs not run again."""
    agents: dict[str, Agent | None] = {name: ev.agents.get(name) for name in ev.variants}
    return begin(
        type(ev),
        {**agents, **new},
        ev.tasks,
        ev.repeats,
        seed=ev.seed,
        errors=ev.errors,
        concurrency=ev.concurrency,
        timeout=ev.timeout,
        cache=ev.cache,
        keep=kept,
        progress=False,
    )


async def _sweep(ev: Evaluation, jobs: list[tuple[str, Task, int]], run: Any = run_task) -> None:
    pending = iter(jobs)

    async def worker() -> None:
        for name, task, repeat in pending:  # one shared iterator: each job is taken once
            record, session, trace, state = await run(
                name, ev.agents[name], task, repeat, ev.seed, timeout=ev.timeout, cache=ev.cache
            )
            ev.add(record, session, trace, state)
            # A run that never suspends (the stand-in, instant tools) would otherwise hold the
            # loop for the whole sweep: let timers (the live matrix) and clicks (Stop) in.
            await asyncio.sleep(0)

    try:
        await asyncio.gather(*(worker() for _ in range(min(ev.concurrency, len(jobs)) or 1)))
    finally:
        variants: list[Any] = list(ev.agents.values())
        for app in {a for a in variants if isinstance(a, App)}:
            await asyncio.to_thread(app.close)  # its proxy and model server
        ev.finish()


class Progress:
    """A progress report on stderr (:class:`~agentnb.evals.progress.ProgressLine`: rewritten
    in place on a terminal, whole lines in a log), and the last one at the end."""

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev
        self.line = ProgressLine()

    def __call__(self, record: EvalRecord | None) -> None:
        ev = self.ev
        counts = {o: sum(r.outcome == o for r in ev.records) for o in ("pass", "fail", "error")}
        line = (
            f"evaluate: {len(ev.records)}/{ev.total} runs — {counts['pass']} pass, "
            f"{counts['fail']} fail, {counts['error']} error"
        )
        self.line.show(line, final=record is None)
