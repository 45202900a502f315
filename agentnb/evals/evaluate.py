"""evaluate(): every variant on every task, repeated, concurrently, each run bounded.

    ev = await an.evaluate({"article": agent, "vague": vague}, an.travel.task_set(), repeats=5)
    ev = an.evals.start(...)        # returns at once; the sweep runs in the background
    await ev.wait(); ev.cancel(); ev.done

Runs go in the order (repeat, task, variant): a live matrix fills task by task. At most
``concurrency`` run at once, each within ``timeout`` seconds; a failing run never stops it.
Each (task, repeat) gets its own seed, derived from ``seed``, the same for every variant:
paired runs share their randomness and the whole evaluation reproduces exactly.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import display
from .._settings import seconds
from ..errors import ConfigurationError, RunStateError
from .apps import App
from .cache import ResponseCache
from .evaluation import Errors, Evaluation
from .log.recording import follow, kept_file
from .progress import ProgressLine
from .record import EvalRecord
from .runner import run_task
from .statistics import warm_up
from .sweep import SweepRunner
from .tasks import Task, TaskSet

if TYPE_CHECKING:
    from ..agent import Agent
    from ..service import Runtime

__all__ = ["as_cache", "as_tasks", "evaluate", "start"]


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


def start(
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
    """Start a sweep in the background and return its :class:`Evaluation` at once.

    Needs a running event loop (a notebook cell, or inside ``async def``). ``await ev`` (or
    ``await ev.wait()``) waits for it; ``ev.cancel()`` stops it; ``ev.subscribe(fn)`` hears
    each finished run. Arguments as for :func:`evaluate`. ``keep`` holds runs already done,
    as ``(record, session[, trace[, state]])``, not run again (``rerun``, ``extend`` use it).
    """
    agents = _variants(variants)
    timeout = seconds("timeout", timeout)  # 0 or -1 meant no limit, silently
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RunStateError(
            "an.evals.start() runs the sweep in the background of a running event loop (a "
            "notebook, or inside async def); in a script use asyncio.run(an.evaluate(...))"
        ) from None
    ev = Evaluation(
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
        ev.subscribe(_Progress(ev))
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
    agents: dict[str, Agent | None] = {name: ev.agents.get(name) for name in ev.variants}
    new = start(
        agents,
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
    return await new.wait()


def extend(ev: Evaluation, variants: dict[str, Agent]) -> Evaluation:
    """``ev.extend(variants)``: ev's records kept, the new variants run in the background."""
    new = _variants(variants)
    taken = sorted(set(new) & set(ev.variants))
    if taken:
        raise ConfigurationError(f"variants {taken} are already in this evaluation")
    agents: dict[str, Agent | None] = {name: ev.agents.get(name) for name in ev.variants}
    kept = [(r, *ev.kept(r)) for r in ev.records]
    started = start(
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
    started.descriptions = {**ev.descriptions, **started.descriptions}
    return started


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


async def evaluate(
    variants: dict[str, Agent] | Agent,
    tasks: TaskSet | Iterable[Task | str],
    repeats: int = 1,
    *,
    concurrency: int = 8,
    errors: Errors = "fail",
    seed: int = 0,
    timeout: float | None = 300.0,
    cache: ResponseCache | str | bool | None = None,
    progress: bool | None = None,
    runtime: Runtime | None = None,
    log: Any = None,
    note: str = "",
) -> Evaluation:
    """Run every variant on every task ``repeats`` times and return the :class:`Evaluation`.

    Args:
        variants: names → agents (``agent.copy(...)`` makes a variant); one agent is fine.
        tasks: a :class:`TaskSet`, tasks, or plain request strings (no checks).
        repeats: runs per (variant, task); each repeat has its own derived seed.
        concurrency: runs at once. timeout: seconds per run (None: no limit).
        errors: ``"fail"`` (an error run counts as not passed) or ``"drop"`` (left out of
            rates and pairs).
        seed: the evaluation's seed; a model with ``with_seed(seed)`` is reseeded per run (see
            FunctionModel), an OpenAI-compatible model gets the ``seed`` request parameter.
        cache: a :class:`ResponseCache` (or a JSONL path, or True for a fresh one) that
            answers repeated requests; keyed by model, request and repeat index.
        progress: ``None``: the live matrix in a notebook (a progress line there when the
            widgets are not installed), a progress line on a terminal's stderr; ``True``: the
            progress line; ``False``: nothing.
        runtime: an :class:`agentnb.Runtime` to run the sweep's runs as its tasks: at most
            its ``max_concurrency`` at once, each kept in its log (the same sweep again runs
            only what is missing), on DBOS spread over its workers (:mod:`.sweep`).
        log, note: where it is recorded, and words kept (:mod:`agentnb.evals.log`).
    """
    ev = start(
        variants,
        tasks,
        repeats,
        concurrency=concurrency,
        errors=errors,
        seed=seed,
        timeout=timeout,
        cache=cache,
        progress=progress,
        runtime=runtime,
        log=log,
        note=note,
    )
    if progress is None and display.in_kernel():
        if display.has_view(ev):
            display.show(ev)  # the live matrix, filling in while we wait
        else:  # a static table would not fill in: a progress line instead
            ev.subscribe(_Progress(ev))
    try:
        return await ev.wait()
    except asyncio.CancelledError:
        ev.cancel()
        raise


class _Progress:
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
