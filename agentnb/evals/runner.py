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
from ..storage import Trace
from ..tools import Toolset, replaying, source_of
from .apps import App
from .batches import calls
from .cache import CachedModel, ResponseCache
from .checked import Checked, annotate
from .checks.base import CheckResult, Evidence, run_check
from .checks.outcome import EndState
from .conversation import Start, conversation
from .faithful import Log, annotate_replay
from .hooks import tools_of
from .record import EvalRecord, row_tags
from .replayer import RunKey, replaying_run
from .states import Refused
from .turns import parted, turns_of

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime import Run, RunResult
    from .tasks import Task

__all__ = ["Start", "check", "derive_seed", "run_agent", "run_task"]


def derive_seed(seed: int, task: str, repeat: int) -> int:
    """The seed of one (task, repeat): the same for every variant, so pairs share it. Any
    task name has one: a lone surrogate (a name read from JSON as ``"\\ud800"``) is encoded
    as it is (``surrogatepass``), so it neither crashes the sweep nor shares another's seed."""
    text = f"{seed}\x00{task}\x00{repeat}"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
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
    from ..models import OpenAIModel

    return isinstance(model, OpenAIModel)


def prepare(agent: Agent, task: Task) -> tuple[Agent, Any]:
    """The run's agent with the task's own tools (``Task(tools=factory)``, wrapped to replay
    when ``agent`` replays, described as the variant describes its tools: :func:`describe`)
    and its setup applied, and the state end-state checks read.
    ``agent`` is changed in place: :func:`run_agent`'s copy when the task has tools or a
    setup (see :func:`run_task`).

    A replaying agent whose tools a setup replaced with live ones raises here, before the
    run: those tools would execute, silently, in a run meant to replay."""
    own = task.tools is None and task.setup is None  # the variant's tools, as it says
    texts = {} if own else descriptions(agent)  # the variant's, before a task's replace them
    source = agent.replay
    state = None
    if task.tools is not None:
        tools, state = tools_of(task.tools(), task.name)  # a tuple of tools, or (tools, state)
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
    if texts:
        describe(agent, texts)
    return agent, agent if state is None else state


def descriptions(agent: Agent) -> dict[str, str]:
    """What the variant says of each of its tools: tool name -> description."""
    return {t.name: t.description for t in agent.tools}


def describe(agent: Agent, texts: dict[str, str]) -> None:
    """Give the run's tools the variant's descriptions (``texts``), in place: a tool a task's
    factory or setup made takes the description the variant gives a tool of its name, so a
    variant's descriptions (``agent.copy(descriptions=...)``, a Playground edit, an optimiser
    proposal) reach the model whatever tools the run gets. The function, its parameters and
    the state stay the task's."""
    changed = {
        t.name: texts[t.name]
        for t in agent.tools
        if t.name in texts and t.description != texts[t.name]
    }
    if changed:
        agent.tools = agent.copy(descriptions=changed).tools


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
    """Run ``task`` once with ``agent`` (the variant ``name``) and check it: its row, session,
    trace and the end state its checks read.

    ``session`` and ``start`` are where its turns run and how each is started (a fresh
    session and ``agent.start``; a sweep on the service gives its task's session and its
    attempt's ``start``, so each turn is one of the task's runs: :mod:`agentnb.evals.sweep`).

    A replaying run that never left its recording reads the recorded run's end state: its
    tools ran nothing, so the world it answered from is the one the recorded run left."""
    run_seed = derive_seed(seed, task.name, repeat)
    tags = row_tags(name, task.name, repeat, run_seed)
    if isinstance(agent, App):
        return await run_app(name, agent, task, repeat, run_seed, timeout=timeout)
    session = Session() if session is None else session
    on = session

    def begin(agent: Agent, text: str) -> Run:
        if start is not None:
            return start(agent, text, tags)
        return agent.start(text, session=on, tags=tags)

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
                    runs.append(begin(agent, turn))
                    await runs[-1].finish()
            if task.user is not None:  # a conversation: every turn a run, the last is the task's
                key = (name, task.name, repeat)
                talk = conversation(agent, task, session, tags, run_seed, key, start=start)
                try:
                    await talk.finish()
                finally:
                    runs.extend(talk.runs)
                    last = talk.runs[-1] if talk.runs else None
                if last is None or last.result is None:
                    raise RuntimeError(talk.end.detail if talk.end else "no turn was run")
                return last.result
            last = begin(agent, task.input)
            runs.append(last)
            return await last.finish()

        try:
            with replaying_run((name, task.name, repeat)) as log:
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
    state = judged_state(agent.replay, (name, task.name, repeat), state, log, session, record)
    talked = turns_of(session, record) if task.user is not None else None
    annotate(record, await check(Evidence(result, state, task, talked), timeout, error))
    return EvalRecord.of(record, session), session, Trace(result.events), state


def judged_state(
    source: Any, key: RunKey, state: Any, log: Log, session: Session, record: RunRecord
) -> Any:
    """The end state the checks of run ``key`` read: a live run's own ``state``. A replaying
    run's tools ran nothing, so its own state is not the world it answered from: how its
    replay went is written on its ``record`` (:mod:`agentnb.evals.faithful`), and it reads
    the recorded run's end state when it reproduced that run exactly and completely, else a
    :class:`~agentnb.evals.states.Refused` naming the first difference."""
    if source is None:
        return state
    if not callable(getattr(source, "replayed", None)):
        return Refused(f"{type(source).__name__} answered this run's tools and keeps no end state")
    made = calls(session.messages)
    found = annotate_replay(record, source.replayed(key, log, made, parted(record)))
    return source.end_state(key, found)


async def check(evidence: Evidence, timeout: float | None, error: str = "") -> Checked:
    """Run the task's checks on one run, each within ``timeout``: what they found (``error``:
    what already went wrong in the run, e.g. its timeout; a check that times out or raises
    adds its own when there is none)."""
    results: list[CheckResult] = []
    refused = evidence.state if isinstance(evidence.state, Refused) else None
    for c in evidence.task.checks:
        if refused is not None and isinstance(c, EndState):  # answered, never guessed
            results.append(CheckResult(c.name, False, f"refused: {refused.reason}"))
            error = error or f"{c.name} refused: {refused.reason}"
            continue
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
