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
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import display
from .cache import ResponseCache
from .evaluation import Errors, Evaluation
from .launch import Progress, begin
from .tasks import Task, TaskSet

if TYPE_CHECKING:
    from ..agent import Agent
    from ..service import Runtime

__all__ = ["evaluate", "start"]


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
    return begin(
        Evaluation,
        variants,
        tasks,
        repeats,
        concurrency=concurrency,
        errors=errors,
        seed=seed,
        timeout=timeout,
        cache=cache,
        progress=progress,
        keep=keep,
        runtime=runtime,
        log=log,
        note=note,
    )


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
    refresh = None
    if progress is None and display.in_kernel():
        if display.has_view(ev):
            refresh = display.show_live(ev)  # the live matrix, filling in while we wait
        else:  # a static table would not fill in: a progress line instead
            ev.subscribe(Progress(ev))
    try:
        return await ev.wait()
    except asyncio.CancelledError:
        ev.cancel()
        raise
    finally:
        if refresh is not None:
            refresh()  # the saved notebook shows how the sweep ended, not "0/585 running"
