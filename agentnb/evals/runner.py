"""Running one (variant, task, repeat): a fresh session, the per-run seed, the checks.

Each turn of the task is an ordinary run on the session, tagged with the row it is
(``variant``, ``task``, ``repeat``, ``seed``): its record in ``session.runs`` meters it (tokens
as each call answers, cache hits apart, its duration on the events' clock). When the task's
run has ended its checks read it, and what they found is annotated on its record
(:mod:`agentnb.evals.checked`): the row (:class:`~agentnb.evals.EvalRecord`) is a view of
those records. Nothing a run does stops the sweep: a model or HTTP failure, a timeout, a check
that raises each become an ``error`` with its text. A run that never started (a setup that
raised, a timeout before it) still has a record, with no figures, carrying the error.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..session import RunRecord, Session, new_run_id, new_trace_id
from ..storage.trace import Trace
from ..tools import Toolset
from ..tools.replaying import replaying, source_of
from .apps import App
from .cache import CachedModel, ResponseCache
from .checked import Checked, annotate
from .checks.base import CheckResult, Evidence, run_check
from .conversation import conversation
from .record import EvalRecord, row_tags
from .replayer import replaying_run
from .turns import turns_of

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime.result import RunResult
    from ..runtime.run import Run
    from .tasks import Task

__all__ = ["check", "derive_seed", "run_agent", "run_task"]


def derive_seed(seed: int, task: str, repeat: int) -> int:
    """The seed of one (task, repeat): the same for every variant, so pairs share it."""
    digest = hashlib.sha256(f"{seed}\x00{task}\x00{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def run_agent(
    agent: Agent, seed: int, repeat: int, cache: ResponseCache | None, *, own: bool = False
) -> Agent:
    """The agent of one run: its model reseeded (``with_seed``), or the ``seed`` request
    parameter for an OpenAI-compatible model, and answered from ``cache`` when given. A copy
    when anything changes or the run needs its ``own`` (its task's tools or setup change it);
    else ``agent`` itself (runs share an agent as concurrent ``agent.run`` calls do)."""
    model: Any = agent.model
    changes: dict[str, Any] = {}
    reseed = getattr(model, "with_seed", None)
    if callable(reseed):
        model = changes["model"] = reseed(seed)
    elif _takes_seed(model) and "seed" not in agent.model_params:
        changes["model_params"] = {**agent.model_params, "seed": seed}
    if cache is not None and model is not None:
        changes["model"] = CachedModel(model, cache, repeat)
    return agent.copy(**changes) if changes or own else agent


def _takes_seed(model: Any) -> bool:
    """An OpenAI-compatible model takes the ``seed`` request parameter (dispatch by type)."""
    from ..models.openai.client import OpenAIModel

    return isinstance(model, OpenAIModel)


def prepare(agent: Agent, task: Task) -> tuple[Agent, Any]:
    """The run's agent with the task's own tools (``Task(tools=factory)``, wrapped to replay
    when ``agent`` replays) and its setup applied, and the state end-state checks read.
    ``agent`` is changed in place: :func:`run_agent`'s copy when the task has tools or a
    setup (see :func:`run_task`).

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
) -> tuple[EvalRecord, Session | None, Trace | None, Any]:
    """Run ``task`` once with ``agent`` (the variant ``name``) and check it: its row, session,
    trace and the end state its checks read.

    A replaying run that never left its recording reads the recorded run's end state: its
    tools ran nothing, so the world it answered from is the one the recorded run left."""
    run_seed = derive_seed(seed, task.name, repeat)
    tags = row_tags(name, task.name, repeat, run_seed)
    if isinstance(agent, App):
        return await run_app(name, agent, task, repeat, run_seed, timeout=timeout)
    session = Session()
    runs: list[Run] = []
    last: Run | None = None  # the task's own run (its last turn), once started
    state: Any = None
    error = ""
    try:
        own = task.tools is not None or task.setup is not None  # they change the agent
        agent, state = prepare(run_agent(agent, run_seed, repeat, cache, own=own), task)

        async def turns() -> RunResult:
            nonlocal last
            for turn in task.history:  # earlier turns set the scene, inside the same timeout
                if isinstance(turn, dict):
                    session.append(turn)
                else:
                    runs.append(agent.start(turn, session=session, tags=tags))
                    await runs[-1].finish()
            if task.user is not None:  # a conversation: every turn a run, the last is the task's
                talk = conversation(agent, task, session, tags, run_seed, (name, task.name, repeat))
                try:
                    await talk.finish()
                finally:
                    runs.extend(talk.runs)
                    last = talk.runs[-1] if talk.runs else None
                if last is None or last.result is None:
                    raise RuntimeError(talk.end.detail if talk.end else "no turn was run")
                return last.result
            last = agent.start(task.input, session=session, tags=tags)
            runs.append(last)
            return await last.finish()

        try:
            with replaying_run((name, task.name, repeat)):
                async with asyncio.timeout(timeout):
                    await turns()
        except TimeoutError:
            error = f"timed out after {timeout:g} s"
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    # the row's run: the task's, else the last turn that began, else one that never started
    record = runs[-1].record if runs else _never_started(task, tags)
    result = last.result if last is not None else None
    if result is None:
        annotate(record, Checked.of((), error or "the run did not start"))
        return EvalRecord.of(record, session), session, None, None
    recorded = getattr(agent.replay, "end_state", None)
    row = EvalRecord.of(record, session)
    if callable(recorded) and not row.divergence:
        state = recorded((name, task.name, repeat), state)
    talked = turns_of(session, record) if task.user is not None else None
    annotate(record, await check(Evidence(result, state, task, talked), timeout, error))
    return row, session, Trace(result.events), state


async def check(evidence: Evidence, timeout: float | None, error: str = "") -> Checked:
    """Run the task's checks on one run, each within ``timeout``: what they found (``error``:
    what already went wrong in the run, e.g. its timeout; a check that times out or raises
    adds its own when there is none)."""
    results: list[CheckResult] = []
    for c in evidence.task.checks:
        try:
            results.append(await run_check(c, evidence, timeout))
        except TimeoutError:
            why = f"timed out after {timeout:g} s"
            results.append(CheckResult(c.name, False, why))
            error = error or f"check {c.name} {why}"
        except Exception as exc:
            results.append(CheckResult(c.name, False, f"raised {exc!r}"))
            error = error or f"check {c.name} raised {type(exc).__name__}: {exc}"
    return Checked.of(results, error)


async def run_app(
    name: str, app: App, task: Task, repeat: int, seed: int, *, timeout: float | None
) -> tuple[EvalRecord, Session | None, Trace | None, Any]:
    """One run of an app (see :mod:`agentnb.evals.apps`), checked like an agent's: its
    record is rebuilt from the calls the proxy saw, tagged as the row it is."""
    tags = row_tags(name, task.name, repeat, seed)
    error = ""
    try:
        async with asyncio.timeout(timeout):
            result, session, state = await app.run(task, seed, tags=tags)
    except TimeoutError:
        error = f"timed out after {timeout:g} s"
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    if error:
        record = _never_started(task, tags)
        annotate(record, Checked.of((), error))
        return EvalRecord.of(record), None, None, None
    annotate(result.record, await check(Evidence(result, state, task), timeout))
    return EvalRecord.of(result.record, session), session, None, state


def _never_started(task: Task, tags: dict[str, str]) -> RunRecord:
    """The record of a run that never started: its ids and tags, no figures (``start`` is
    None: it never held its session)."""
    return RunRecord(new_run_id(), new_trace_id(), task.input, tags=tags)
