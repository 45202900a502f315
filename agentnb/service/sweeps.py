"""Sweeps on the service: an evaluation's runs as the runtime's jobs (issue 29).

``an.evaluate(variants, tasks, runtime=rt)`` hands every (variant, task, repeat) to ``rt``
and gathers the records into the same :class:`~agentnb.Evaluation` (live matrix included):

- at most ``rt.max_concurrency`` runs at once: the endpoint's rate limit;
- with a SQLite or Postgres store each finished run is kept (``agentnb_sweep_runs``, its record,
  session and trace), keyed by the sweep and the run: the same sweep started again - after a
  crash, in a new process - takes the runs it finds and runs only the others, so none is run or
  counted twice;
- on DBOS each run is a workflow of its own, its id made of the same key (submitting it again
  attaches to it), run by whichever worker is free: the workers know the variants and the tasks
  by name (``python -m agentnb worker ... --variants module:attr --tasks module:attr``). A worker
  killed mid-run is taken over like any other (see :mod:`.lease`): the run starts again on a
  survivor, and its record is kept once.

A run's key is a digest of what decides it: its variant's name and what the variant is
(instructions, model, parameters, tools: as ``Evaluation.descriptions``, and the code of its
model and tools), each task's name, input, history, checks (their code), setup, tools,
metadata and user (:mod:`agentnb.evals.identity`), the repeats and the seed (the same seeds every
time, and the same for every variant: a sweep on the service and in process agree). Other
variants are not part of it: a variant changed under the same name runs again, the unchanged
ones keep their runs, and a worker whose variant differs from the sweep's refuses its runs
instead of making them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..messages import parse_message
from ..session.session import Session
from ..storage.trace import Trace

if TYPE_CHECKING:
    from ..agent import Agent
    from ..evals.cache import ResponseCache
    from ..evals.record import EvalRecord
    from ..evals.tasks import Task
    from ..storage.database import SQLDatabase, Statements
    from .durable import DBOS
    from .runtime import Runtime

__all__ = ["SweepRunner", "SweepRuns", "sweep_key"]

Kept = tuple["EvalRecord", Session | None, Trace | None, Any]


def _digest(what: Any) -> str:
    text = json.dumps(what, ensure_ascii=False, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def variant_digest(agent: Agent | None) -> str | None:
    """What the variant is, as a digest: ``Evaluation.descriptions``' and the code of its
    model and tools (a tool or model function changed under the same name is a new variant)."""
    from ..evals.identity import stable_identity
    from ..evals.tables import describe

    if agent is None:
        return None
    code = {t.name: stable_identity(getattr(t, "fn", None)) for t in getattr(agent, "tools", ())}
    model = stable_identity(getattr(agent, "model", agent))
    return _digest([describe(agent), code, model])


def sweep_key(tasks: Any, repeats: int, seed: int) -> str:
    """What every run of the sweep shares, as a digest: each task's input, history, checks
    (their code and settings, not their names), setup, tools and metadata, the repeats and
    the seed. The variants are not in it (:func:`job_id` adds each run's own)."""
    from ..evals.identity import stable_identity

    runs = [
        stable_identity(
            [t.name, t.input, t.history, t.checks, t.setup, t.tools, t.metadata]
            + ([t.user.to_dict()] if getattr(t, "user", None) is not None else [])
        )
        for t in tasks
    ]
    return _digest([runs, repeats, seed])


def job_id(key: str, variant: str, digest: str | None, task: str, repeat: int) -> str:
    """The run's id in the log and in the engine: the same for the same run of the same
    variant (``digest``: :func:`variant_digest`) in a sweep of the same ``key``."""
    run = hashlib.sha256(f"{variant}\x00{digest}\x00{task}\x00{repeat}".encode()).hexdigest()
    return f"ev-{key}-{run[:16]}"


class SweepRuns:
    """Finished runs of sweeps, by job id: a dict, or ``agentnb_sweep_runs`` beside the store."""

    def __init__(self, db: SQLDatabase | None) -> None:
        self.db = db
        self.rows: dict[str, tuple[str, str, str]] = {}
        if db is None:
            return

        def create(run: Statements) -> None:
            if db.dialect == "postgres":  # CREATE ... IF NOT EXISTS races between processes
                run("SELECT pg_advisory_xact_lock(7242005)")
            run(
                "CREATE TABLE IF NOT EXISTS agentnb_sweep_runs (job_id TEXT PRIMARY KEY, "
                "record TEXT NOT NULL, session TEXT NOT NULL, trace TEXT NOT NULL)"
            )

        db.write("set up the sweep runs of", create)

    def put(
        self, job: str, record: EvalRecord, session: Session | None, trace: Trace | None
    ) -> None:
        row = (  # the row's run records (evals reads the row back from them)
            json.dumps({"runs": [run.to_dict() for run in record.runs]}, ensure_ascii=False),
            json.dumps(session.to_openai() if session is not None else None, ensure_ascii=False),
            trace.to_jsonl() if trace is not None else "",
        )
        if self.db is None:
            self.rows.setdefault(job, row)
            return
        self.db.run(  # the first record of a run stands: a run taken over is kept once
            f"keep sweep run {job} in",
            "INSERT INTO agentnb_sweep_runs (job_id, record, session, trace) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (job_id) DO NOTHING",
            (job, *row),
        )

    def get(self, job: str) -> Kept | None:
        from ..evals.rows import read_row
        from ..evals.upgrade import old_row

        if self.db is None:
            row = self.rows.get(job)
        else:
            rows = self.db.run(
                f"read sweep run {job} from",
                "SELECT record, session, trace FROM agentnb_sweep_runs WHERE job_id = ?",
                (job,),
            )
            row = rows[0] if rows else None
        if row is None:
            return None
        record, messages, trace = row
        wire = json.loads(messages)
        session = None
        if wire is not None:
            session = Session()
            session.transcript.rewrite([parse_message(m, where="a sweep's run") for m in wire])
        data = json.loads(record)  # a row kept before runs were the record: read into one
        kept = read_row(data["runs"], session) if "runs" in data else old_row(data, session)
        return (
            kept,
            session,
            Trace.from_jsonl(trace) if trace else None,
            None,  # the end state its checks read stayed in the process that ran it
        )


class SweepRunner:
    """Runs an evaluation's (variant, task, repeat) through a runtime: ``evaluate`` calls it
    as it would run one itself (see the module docstring)."""

    def __init__(self, rt: Runtime, key: str) -> None:
        self.rt = rt
        self.key = key
        self.gate = asyncio.Semaphore(rt.max_concurrency)
        self.digests: dict[str, str | None] = {}  # variant name -> variant_digest, once each

    async def __call__(
        self,
        name: str,
        agent: Agent,
        task: Task,
        repeat: int,
        seed: int,
        *,
        timeout: float | None,
        cache: ResponseCache | None,
    ) -> Kept:
        from ..evals.runner import run_task

        if name not in self.digests:
            self.digests[name] = variant_digest(agent)
        digest = self.digests[name]
        rt, job = self.rt, job_id(self.key, name, digest, task.name, repeat)
        runs = rt.sweep_runs
        kept = await asyncio.to_thread(runs.get, job)
        if kept is not None:  # run before (an earlier process, a crash): taken as it is
            return kept
        from .durable import DBOS

        async with self.gate:
            if isinstance(rt.backend, DBOS):  # a workflow of its own, on whichever worker is free
                runs_on = (job, name, task.name, repeat, seed, timeout, digest)
                await _on_workers(rt.backend, *runs_on)
                kept = await asyncio.to_thread(runs.get, job)
                if kept is None:
                    raise RuntimeError(f"sweep run {job} ended with no record kept")
                return kept
            record, session, trace, state = await run_task(
                name, agent, task, repeat, seed, timeout=timeout, cache=cache
            )
        await asyncio.to_thread(runs.put, job, record, session, trace)
        return record, session, trace, state


async def _on_workers(
    backend: DBOS,
    job: str,
    name: str,
    task: str,
    repeat: int,
    seed: int,
    timeout: float | None,
    digest: str | None,
) -> None:
    """Run one sweep run as a workflow of its own (``job`` its id: submitting it again
    attaches to it) and wait for it to end."""
    from . import workflow

    await backend.start()
    options = workflow.options(backend.app_name, workflow.SWEEP_RUN, job, job)
    await backend.client.enqueue_async(options, job, name, task, repeat, seed, timeout, digest)
    handle = await backend.client.retrieve_workflow_async(job)
    await handle.get_result(polling_interval_sec=backend.polling)


async def run_job(
    backend: DBOS,
    job: str,
    name: str,
    task_name: str,
    repeat: int,
    seed: int,
    timeout: float | None,
    digest: str | None,
) -> str:
    """One sweep run in a worker (a DBOS step): run it unless its record is kept; the outcome."""
    from ..evals.runner import run_task

    rt, variants, tasks = backend.rt, backend.sweep_variants, backend.sweep_tasks
    kept = await asyncio.to_thread(rt.sweep_runs.get, job)
    if kept is not None:
        return str(kept[0].outcome)
    if name not in variants or task_name not in {t.name for t in tasks}:
        raise ConfigurationError(
            f"this worker knows no variant {name!r} or task {task_name!r}: start it with "
            "--variants and --tasks naming the sweep's"
        )
    if variant_digest(variants[name]) != digest:
        raise ConfigurationError(
            f"this worker's variant {name!r} is not the sweep's (its instructions, model or "
            "tools differ): start the workers with the sweep's --variants"
        )
    record, session, trace, _ = await run_task(
        name, variants[name], tasks[task_name], repeat, seed, timeout=timeout, cache=None
    )
    await asyncio.to_thread(rt.sweep_runs.put, job, record, session, trace)
    return str(record.outcome)
