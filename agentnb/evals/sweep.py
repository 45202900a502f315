"""Sweeps on the service: an evaluation's runs as a runtime's tasks (``an.evaluate(...,
runtime=rt)``).

Each (variant, task, repeat) is an ordinary task of the runtime (:mod:`agentnb.service.jobs`):
a session of its own, tagged with what decides the run - ``job=evaluation``, ``sweep`` (a
digest of every task's input, history, checks, setup, tools and metadata, the repeats and the
seed), ``variant`` and its ``digest`` (its instructions, model, parameters and tools, and the
code of its model and tools: :func:`variant_digest`), ``task``, ``repeat`` and ``seed`` - and
run by the job :class:`Evaluations` serves: in this process on the in-process backend, on
DBOS by whichever worker is free (``python -m agentnb worker ... --variants module:attr
--tasks module:attr``: the workers know the variants and the tasks by name). Every run of the
task - its history turns, its input - is one of the task's runs, tagged so; its checks'
verdict is annotated on the last one. The :class:`~agentnb.Evaluation` (its live matrix
included) is filled from those records as each task ends.

What the sweep keeps:

- at most ``rt.max_concurrency`` runs at once: the endpoint's rate limit;
- each finished run is a task in the runtime's log (with a SQLite or Postgres store: across
  processes), found again by its tags: the same sweep started again - after a crash, in a new
  process - takes the runs it finds, waits for those under way on DBOS, and runs only the
  others, so none is counted twice; a job that finds its run kept already does not run it
  again;
- a variant changed under its name has another digest: its runs are made anew, the unchanged
  ones keep theirs; a worker whose variant differs from the sweep's refuses its runs instead
  of making them;
- a run cut short (its worker killed) is run again from the start by a survivor, and counted
  once.

A store kept by the release before (its finished runs in ``agentnb_sweep_runs``) is read: a
run found there is taken as it was kept, and the table is never written again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, RunStateError
from ..messages import parse_message
from ..session import Session
from ..storage import SQLStore, Trace
from .apps import App
from .checked import KEY as CHECKS
from .checked import Checked, annotate
from .identity import stable_identity
from .record import EvalRecord
from .rows import read_row
from .runner import derive_seed
from .sweep_job import JOB, KEY, NOT_STARTED, Evaluations, Sweep, digest_of, row_of, variant_digest
from .tasks import Task, TaskSet
from .upgrade import old_row

if TYPE_CHECKING:
    from ..agent import Agent
    from ..service import Runtime, TaskInfo
    from .cache import ResponseCache

__all__ = ["SweepRunner", "sweep_key", "variant_digest"]

Kept = tuple[EvalRecord, Session | None, Trace | None, Any]


def sweep_key(tasks: Any, repeats: int, seed: int) -> str:
    """What every run of the sweep shares, as a digest: each task's input, history, checks
    (their code and settings, not their names), setup, tools and metadata, the repeats and
    the seed. The variants are not in it (each run's tags add its own)."""
    runs = [
        stable_identity(
            [t.name, t.input, t.history, t.checks, t.setup, t.tools, t.metadata]
            + ([t.user.to_dict()] if t.user is not None else [])
        )
        for t in tasks
    ]
    return digest_of([runs, repeats, seed])


def _legacy_id(key: str, variant: str, digest: str | None, task: str, repeat: int) -> str:
    """A run's id in ``agentnb_sweep_runs`` (the release before)."""
    run = hashlib.sha256(f"{variant}\x00{digest}\x00{task}\x00{repeat}".encode()).hexdigest()
    return f"ev-{key}-{run[:16]}"


class SweepRunner:
    """Runs an evaluation's (variant, task, repeat) as a task of ``rt``: ``evaluate`` calls
    it as it would run one itself (see the module docstring)."""

    def __init__(
        self, rt: Runtime, variants: dict[str, Any], tasks: TaskSet, repeats: int, seed: int
    ) -> None:
        apps = sorted(n for n, a in variants.items() if isinstance(a, App))
        if apps:
            raise ConfigurationError(
                f"variants {apps} are apps: an app runs in this process, behind its proxy; "
                "evaluate them without runtime="
            )
        self.rt, self.seed = rt, seed
        self.key = sweep_key(tasks, repeats, seed)
        self.gate = asyncio.Semaphore(rt.max_concurrency)
        self.digests = {n: variant_digest(a) for n, a in variants.items() if a is not None}
        job = rt.jobs.get(JOB)
        if not isinstance(job, Evaluations):
            job = Evaluations(rt)
            rt.serve(JOB, job)
        self.job = job
        if rt.backend.name == "inprocess" or getattr(rt.backend, "workers", False):
            live = {n: a for n, a in variants.items() if a is not None}
            job.sweeps[self.key] = Sweep(live, {t.name: t for t in tasks}, None, self.digests)
        self.found: dict[tuple[str, ...], TaskInfo] = {}
        for info in rt.list(tags={"job": JOB, "sweep": self.key}):  # one read, at the start
            mine = tuple(info.tags[k] for k in KEY[2:])
            if mine not in self.found or row_of(self.found[mine]) is None:
                self.found[mine] = info
        self.legacy = _Legacy(rt, self.key)

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
        digest = self.digests.get(name)
        run = (name, digest or "", task.name, str(repeat))
        found = self.found.get(run)
        if found is not None and row_of(found) is not None:
            return self._kept(found)  # run before (an earlier process, a crash)
        old = self.legacy.get(_legacy_id(self.key, name, digest, task.name, repeat))
        if old is not None:
            return old
        sweep = self.job.sweeps.get(self.key)
        if sweep is not None:
            sweep.cache = cache
        async with self.gate:
            task_id = await self._submit(found, name, digest, task, repeat, timeout)
            try:
                info = await self.rt.wait(task_id)
            except asyncio.CancelledError:  # the sweep was stopped: so is its run
                self.rt.cancel(task_id)
                raise
        if row_of(info) is not None:
            return self._kept(info)
        if info.error and NOT_STARTED in info.error:  # its setup raised: an error row
            why = info.error.split(NOT_STARTED, 1)[1]
            record = EvalRecord(name, task.name, repeat, "error", seed=_seed(info), error=why)
            return record, None, None, None
        again = self.rt.list(tags=dict(zip(KEY, (JOB, self.key, *run), strict=True)))
        kept = next((i for i in again if row_of(i) is not None), None)
        if kept is not None:  # the job found it kept by another task
            return self._kept(kept)
        raise RunStateError(
            f"sweep run {name}/{task.name}/{repeat} (task {info.id}) ended {info.status} with "
            f"no record kept: {info.error or info.stop_reason}"
        )

    async def _submit(
        self,
        found: TaskInfo | None,
        name: str,
        digest: str | None,
        task: Task,
        repeat: int,
        timeout: float | None,
    ) -> str:
        """The task of this run: one under way (on DBOS's workers, or in this runtime) is
        waited for; else a new one, on a session of its own."""
        backend = self.rt.backend
        if (  # (a dead process's in-process task is not waited for: it is made anew)
            found is not None
            and not found.done
            and (backend.durable or found.id in backend.submitted())
        ):
            return found.id

        tags = {
            "job": JOB,
            "sweep": self.key,
            "variant": name,
            "digest": digest or "",
            "task": task.name,
            "repeat": str(repeat),
            "seed": str(derive_seed(self.seed, task.name, repeat)),
            "sweep_seed": str(self.seed),
            "timeout": "" if timeout is None else repr(timeout),
        }
        session_id = f"ev-{self.key}-{os.urandom(6).hex()}"
        return await self.rt.submit(session_id, task.input, tags=tags)

    def _kept(self, info: TaskInfo) -> Kept:
        """The row (a view of the task's last run, on its session), the trace of its
        attempt's runs and, when it ran here, the end state its checks read."""
        session = self.rt.session(info.session_id)
        kept = row_of(info)
        assert kept is not None
        record = next((r for r in session.runs if r.run_id == kept.run_id), kept)
        found = (record.annotations or {})[CHECKS]
        if not isinstance(found, Checked):  # read back from the log: its dict
            annotate(record, found)
        attempt = record.tags.get("attempt")
        runs = {r.run_id for r in session.runs if r.tags.get("attempt") == attempt}
        runs &= {r.run_id for r in info.runs}
        trace = Trace([e for e in self.rt.get_trace(info.id) if e.run_id in runs])
        return EvalRecord.of(record, session), session, trace, self.job.states.pop(info.id, None)


def _seed(info: TaskInfo) -> int:
    return int(info.tags.get("seed") or 0)


class _Legacy:
    """The finished runs of this sweep that a store of the release before kept
    (``agentnb_sweep_runs``): read once, when the sweep starts, on a connection closed at
    once; never written."""

    def __init__(self, rt: Runtime, key: str) -> None:
        self.store = rt.store if isinstance(rt.store, SQLStore) else None
        self.key = key
        self.rows = self._read()  # one read, with the sweep's own of its tasks

    def _read(self) -> dict[str, tuple[str, str, str]]:
        if self.store is None:
            return {}
        db = self.store.database()
        try:
            probe = (
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = ?"
                if db.dialect == "postgres"
                else "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
            )
            ((n,),) = db.run("look for agentnb_sweep_runs in", probe, ("agentnb_sweep_runs",))
            if not n:
                return {}
            rows = db.run(
                f"read the runs of sweep {self.key} from",
                "SELECT job_id, record, session, trace FROM agentnb_sweep_runs WHERE job_id LIKE ?",
                (f"ev-{self.key}-%",),
            )
        finally:
            db.close()
        return {job: (record, session, trace) for job, record, session, trace in rows}

    def get(self, job: str) -> Kept | None:
        found = self.rows.get(job)
        if found is None:
            return None
        record, messages, trace = found
        wire = json.loads(messages)
        session = None
        if wire is not None:
            session = Session()
            session.transcript.rewrite([parse_message(m, where="a sweep's run") for m in wire])
        data = json.loads(record)  # a row of its release: read into the record of its run
        row = read_row(data["runs"], session) if "runs" in data else old_row(data, session)
        return row, session, Trace.from_jsonl(trace) if trace else None, None
