"""Running one (variant, task, repeat): a fresh session, the per-run seed, the checks.

Nothing a run does stops the sweep: a model or HTTP failure, a timeout, a check that raises
each become an ``error`` record with its text. The run's session is kept for
:meth:`Evaluation.session`, the trajectory diff and tool recordings.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import TYPE_CHECKING, Any

from ..session import Session
from ..storage.trace import Trace
from .batches import batches
from .cache import CachedModel, ResponseCache
from .checks.base import CheckResult, Evidence, run_check
from .record import EvalRecord

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime.result import RunResult
    from ..runtime.run import Run
    from .tasks import Task

__all__ = ["derive_seed", "run_agent", "run_task"]


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
    elif type(model).__name__ == "OpenAIModel" and "seed" not in agent.model_params:
        changes["model_params"] = {**agent.model_params, "seed": seed}
    if cache is not None and model is not None:
        changes["model"] = CachedModel(model, cache, repeat)
    return agent.copy(**changes)


def _divergence(result: RunResult) -> str:
    for step, batch in enumerate(batches(result.messages)):
        for call in batch:
            if call.kind == "not_recorded":
                return f"step {step}: {call} is not in the recording"
    return ""


async def run_task(
    name: str,
    agent: Agent,
    task: Task,
    repeat: int,
    seed: int,
    *,
    timeout: float | None,
    cache: ResponseCache | None,
) -> tuple[EvalRecord, Session | None, Trace | None]:
    """Run ``task`` once with ``agent`` (the variant ``name``) and check it."""
    run_seed = derive_seed(seed, task.name, repeat)
    record = EvalRecord(name, task.name, repeat, "error", seed=run_seed)
    session = Session()
    runs: list[Run] = []
    state: Any = None
    started = time.perf_counter()
    try:
        agent = run_agent(agent, run_seed, repeat, cache)
        state = task.setup(agent) if task.setup is not None else None
        state = agent if state is None else state

        async def turns() -> RunResult:
            nonlocal started
            for turn in task.history:  # earlier turns set the scene, inside the same timeout
                if isinstance(turn, dict):
                    session.append(turn)
                else:
                    await agent.run(turn, session=session)
            runs.append(agent.start(task.input, session=session))
            started = time.perf_counter()
            return await runs[-1].finish()

        try:
            async with asyncio.timeout(timeout):
                await turns()
        except TimeoutError:
            record.error = f"timed out after {timeout:g} s"
    except Exception as exc:
        record.error = f"{type(exc).__name__}: {exc}"
    record.latency = time.perf_counter() - started
    result = runs[-1].result if runs else None
    if result is None:
        return record, session, None
    _measure(record, result, agent)
    evidence = Evidence(result, state, task)
    for check in task.checks:
        try:
            record.checks.append(await run_check(check, evidence))
        except Exception as exc:
            record.checks.append(CheckResult(check.name, False, f"raised {exc!r}"))
            record.error = record.error or f"check {check.name} raised {type(exc).__name__}: {exc}"
    if not record.error:
        record.outcome = "pass" if all(c.passed for c in record.checks) else "fail"
    return record, session, Trace(result.events)


def _measure(record: EvalRecord, result: RunResult, agent: Agent) -> None:
    trajectory = batches(result.messages)
    record.stop_reason = result.stop_reason
    record.steps = len(trajectory)
    record.model_calls = result.iterations
    record.tool_calls = sum(len(b) for b in trajectory)
    record.tool_errors = sum(c.kind is not None for b in trajectory for c in b)
    record.tokens = result.usage.total_tokens
    record.output = result.output
    record.divergence = _divergence(result)
    model = agent.model
    record.cached_calls = model.hits if isinstance(model, CachedModel) else 0
