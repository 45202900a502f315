"""Running one (variant, task, repeat): a fresh session, the per-run seed, the checks.

Nothing a run does stops the sweep: a model or HTTP failure, a timeout, a check that raises
each become an ``error`` record with its text. The run's session is kept for
:meth:`Evaluation.session`, the trajectory diff and tool recordings.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..session import Session
from ..storage.trace import Trace
from ..tools import Toolset
from ..tools.replaying import replaying, source_of
from .apps import App
from .batches import batches
from .cache import CachedModel, ResponseCache
from .checks.base import CheckResult, Evidence, run_check
from .cost import Metered
from .record import EvalRecord
from .replayer import replaying_run

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime.result import RunResult
    from ..runtime.run import Run
    from .tasks import Task

__all__ = ["Start", "derive_seed", "run_agent", "run_task"]

#: How a run of a task is started: ``start(agent, text)`` (not yet driven).
Start = Callable[["Agent", str], "Run"]


def derive_seed(seed: int, task: str, repeat: int) -> int:
    """The seed of one (task, repeat): the same for every variant, so pairs share it."""
    digest = hashlib.sha256(f"{seed}\x00{task}\x00{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def run_agent(agent: Agent, seed: int, repeat: int, cache: ResponseCache | None) -> Agent:
    """The agent of one run: its model reseeded (``with_seed``), or the ``seed`` request
    parameter for an OpenAI-compatible model, and answered from ``cache`` when given."""
    model: Any = agent.model
    changes: dict[str, Any] = {}
    reseed = getattr(model, "with_seed", None)
    if callable(reseed):
        model = changes["model"] = reseed(seed)
    elif _takes_seed(model) and "seed" not in agent.model_params:
        changes["model_params"] = {**agent.model_params, "seed": seed}
    if cache is not None and model is not None:
        model = changes["model"] = CachedModel(model, cache, repeat)
    if model is not None:  # every call it really makes counted (agentnb.evals.cost)
        changes["model"] = Metered(model)
    return agent.copy(**changes)


#: The error kinds of a replaying tool that left its recorded trajectory.
REPLAY_MISSES = ("mismatch", "exhausted", "not_recorded")


def _takes_seed(model: Any) -> bool:
    """An OpenAI-compatible model takes the ``seed`` request parameter (dispatch by type)."""
    from ..models.openai.client import OpenAIModel

    return isinstance(model, OpenAIModel)


def _divergence(messages: Iterable[Any]) -> str:
    """Where a replaying run first left its recording (any turn), or ""."""
    for batch in batches(messages):
        for call in batch:
            if call.kind in REPLAY_MISSES:
                return f"{call.where}: {call} is a replay {call.kind}"
    return ""


def prepare(agent: Agent, task: Task) -> tuple[Agent, Any]:
    """The run's agent with the task's own tools (``Task(tools=factory)``, wrapped to replay
    when ``agent`` replays) and its setup applied, and the state end-state checks read.

    A replaying agent whose tools a setup replaced with live ones raises here, before the
    run: those tools would execute, silently, in a run meant to replay."""
    source = agent.replay
    state = None
    if task.tools is not None:
        made = task.tools()
        tools, state = made if isinstance(made, tuple) else (made, None)
        tools = list(tools)
        wrapped = [replaying(t, source) for t in tools] if source is not None else tools
        agent.tools = Toolset(wrapped)
    if task.setup is not None:
        returned = task.setup(agent)
        state = returned if returned is not None else state
    if source is not None and any(source_of(t) is None for t in agent.tools):
        live = [t.name for t in agent.tools if source_of(t) is None]
        raise ConfigurationError(
            f"task {task.name!r}: its setup gave the replaying agent live tools "
            f"({', '.join(live)}), which this run would execute; give the task its tools with "
            "Task(tools=factory) "
            "(a replaying agent wraps those), or bind state without replacing agent.tools"
        )
    return agent, agent if state is None else state


async def run_task(
    name: str,
    agent: Agent,
    task: Task,
    repeat: int,
    seed: int,
    *,
    timeout: float | None,
    cache: ResponseCache | None,
    session: Session | None = None,
    start: Start | None = None,
) -> tuple[EvalRecord, Session | None, Trace | None, Any]:
    """Run ``task`` once with ``agent`` (the variant ``name``) and check it: its record,
    session, trace and the end state its checks read.

    ``session`` and ``start`` are where its turns run and how each run is started (a fresh
    session and ``agent.start``; a sweep on the service gives its task's session and the
    attempt's ``start``: :mod:`agentnb.evals.sweep`).

    A replaying run that never left its recording reads the recorded run's end state: its
    tools ran nothing, so the world it answered from is the one the recorded run left."""
    run_seed = derive_seed(seed, task.name, repeat)
    if isinstance(agent, App):
        return await run_app(name, agent, task, repeat, run_seed, timeout=timeout)
    record = EvalRecord(name, task.name, repeat, "error", seed=run_seed)
    session = Session() if session is None else session
    on = session

    def begin(agent: Agent, text: str) -> Run:
        return agent.start(text, session=on) if start is None else start(agent, text)

    runs: list[Run] = []
    state: Any = None
    meter: Metered | None = None
    started = time.perf_counter()
    try:
        agent, state = prepare(run_agent(agent, run_seed, repeat, cache), task)
        meter = agent.model if isinstance(agent.model, Metered) else None

        async def turns() -> RunResult:
            nonlocal started
            for turn in task.history:  # earlier turns set the scene, inside the same timeout
                if isinstance(turn, dict):
                    session.append(turn)
                else:
                    await begin(agent, turn).finish()
            runs.append(begin(agent, task.input))
            started = time.perf_counter()
            return await runs[-1].finish()

        try:
            with replaying_run((name, task.name, repeat)):
                async with asyncio.timeout(timeout):
                    await turns()
        except TimeoutError:
            record.error = f"timed out after {timeout:g} s"
    except Exception as exc:
        record.error = f"{type(exc).__name__}: {exc}"
    record.latency = time.perf_counter() - started
    if meter is not None:  # what it spent, also when it errored
        record.model = meter.name
        record.prompt_tokens = meter.prompt_tokens
        record.completion_tokens = meter.completion_tokens
        record.unmetered = meter.unmetered
    result = runs[-1].result if runs else None
    if result is None:
        return record, session, None, None
    _measure(record, result, agent.model)
    recorded = getattr(agent.replay, "end_state", None)
    if callable(recorded) and not record.divergence:
        state = recorded((name, task.name, repeat), state)
    await _check(record, Evidence(result, state, task), timeout)
    return record, session, Trace(result.events), state


async def _check(record: EvalRecord, evidence: Evidence, timeout: float | None) -> None:
    """Run the task's checks on one run, each within ``timeout``, and set its outcome."""
    for check in evidence.task.checks:
        try:
            record.checks.append(await run_check(check, evidence, timeout))
        except TimeoutError:
            why = f"timed out after {timeout:g} s"
            record.checks.append(CheckResult(check.name, False, why))
            record.error = record.error or f"check {check.name} {why}"
        except Exception as exc:
            record.checks.append(CheckResult(check.name, False, f"raised {exc!r}"))
            record.error = record.error or f"check {check.name} raised {type(exc).__name__}: {exc}"
    if not record.error:
        record.outcome = "pass" if all(c.passed for c in record.checks) else "fail"


async def run_app(
    name: str, app: App, task: Task, repeat: int, seed: int, *, timeout: float | None
) -> tuple[EvalRecord, Session | None, Trace | None, Any]:
    """One run of an app (see :mod:`agentnb.evals.apps`), checked like an agent's."""
    record = EvalRecord(name, task.name, repeat, "error", seed=seed)
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            result, session, state = await app.run(task, seed)
    except TimeoutError:
        record.error = f"timed out after {timeout:g} s"
        return record, None, None, None
    except Exception as exc:
        record.error = f"{type(exc).__name__}: {exc}"
        return record, None, None, None
    record.latency = time.perf_counter() - started
    _measure(record, result, None)
    await _check(record, Evidence(result, state, task), timeout)
    return record, session, None, state


def _measure(record: EvalRecord, result: RunResult, model: Any) -> None:
    trajectory = batches(result.messages)
    record.stop_reason = result.stop_reason
    record.steps = len(trajectory)
    record.model_calls = result.iterations
    record.tool_calls = sum(len(b) for b in trajectory)
    record.tool_errors = sum(c.kind is not None for b in trajectory for c in b)
    record.tokens = result.usage.total_tokens
    record.output = result.output
    record.divergence = _divergence(result.session.messages)
    inner = model.model if isinstance(model, Metered) else model
    record.cached_calls = inner.hits if isinstance(inner, CachedModel) else 0
