"""The job that runs one run of a sweep on the service, wherever the runtime runs it.

A sweep on the service (:mod:`agentnb.evals.sweep`) is a batch of ordinary tasks tagged
``job=evaluation``; :class:`Evaluations` is that job (:mod:`agentnb.service.jobs`): it finds
the run's variant and task by their names (the sweep's own in the process that started it; a
worker's from ``--variants`` and ``--tasks``: :data:`WORKER`), refuses a variant whose digest
is not the sweep's, runs the task through :func:`~agentnb.evals.runner.run_task` on the
task's session, each turn a run of the task's attempt (its checks annotate the last one, as
in process), and ends the task ``done``. A run whose key is kept already (another task made
it) is not made again; one stopped on request ends ``cancelled`` and is made again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, RunStateError
from .checked import KEY as CHECKS
from .identity import variant_identity
from .runner import run_task
from .tasks import Task, TaskSet

if TYPE_CHECKING:
    from ..agent import Agent
    from ..service import Runtime, TaskInfo
    from ..service.jobs import Attempt
    from ..service.tasks import Status
    from ..session import RunRecord
    from .cache import ResponseCache

__all__ = [
    "JOB",
    "KEY",
    "NOT_STARTED",
    "WORKER",
    "Evaluations",
    "Sweep",
    "digest_of",
    "row_of",
    "variant_digest",
]

#: The job that runs an evaluation's tasks (the ``job`` tag).
JOB = "evaluation"
#: A job whose run never started (its setup raised) ends its task with this error.
NOT_STARTED = "the run did not start: "


def digest_of(what: Any) -> str:
    text = json.dumps(what, ensure_ascii=False, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def variant_digest(agent: Agent | None) -> str | None:
    """What the variant is, as a digest: everything that can change its runs
    (:func:`agentnb.evals.identity.variant_identity`: its settings, its model's parameters of
    any shape, each tool's schema and function)."""
    if agent is None:
        return None
    return digest_of(variant_identity(agent))


@dataclass
class Sweep:
    """What the job needs of one sweep run in this process."""

    variants: dict[str, Any]
    tasks: dict[str, Task]
    cache: ResponseCache | None = None
    digests: dict[str, str | None] = field(default_factory=dict)


class Evaluations:
    """The job ``evaluation`` (``rt.serve(JOB, Evaluations(rt))``): runs one (variant, task,
    repeat) of a sweep as its task's attempt, its checks annotated on the last run. It knows
    the sweeps started in this process, and (a worker) ``variants`` and ``tasks`` by name."""

    def __init__(
        self, rt: Runtime, variants: dict[str, Any] | None = None, tasks: Any = ()
    ) -> None:
        self.rt = rt
        self.default = Sweep(dict(variants or {}), {t.name: t for t in tasks})
        self.sweeps: dict[str, Sweep] = {}
        #: The end state each run's checks read, by task id (taken by the sweep here).
        self.states: dict[str, Any] = {}

    async def __call__(self, attempt: Attempt) -> Status:
        tags = attempt.tags
        sweep = self.sweeps.get(tags["sweep"], self.default)
        name, task_name = tags["variant"], tags["task"]
        agent, task = sweep.variants.get(name), sweep.tasks.get(task_name)
        if agent is None or task is None:
            raise ConfigurationError(
                f"this worker knows no variant {name!r} or task {task_name!r}: start it with "
                "--variants and --tasks naming the sweep's"
            )
        if name not in sweep.digests:
            sweep.digests[name] = variant_digest(agent)
        if (sweep.digests[name] or "") != tags["digest"]:
            raise ConfigurationError(
                f"this worker's variant {name!r} is not the sweep's (its instructions, model or "
                "tools differ): start the workers with the sweep's --variants"
            )
        if self._kept_elsewhere(attempt):
            return "cancelled"  # a run of the same key is kept already: not made twice
        timeout = float(tags["timeout"]) if tags.get("timeout") else None
        row, _, _, state = await run_task(
            name,
            agent,
            task,
            int(tags["repeat"]),
            int(tags["sweep_seed"]),
            timeout=timeout,
            cache=sweep.cache,
            session=attempt.session,
            start=lambda agent, text, row_tags: attempt.start(agent, text, tags=row_tags),
        )
        if attempt.cancelled or any(r.state.cancel_requested for r in attempt.runs):
            return "cancelled"  # stopped on request (not by its timeout): made again
        if not attempt.runs:
            raise RunStateError(NOT_STARTED + (row.error or "no run was started"))
        if sweep is not self.default:
            self.states[attempt.task_id] = state
        return "done"  # its row says how the run went (checked: annotated on its record)

    def _kept_elsewhere(self, attempt: Attempt) -> bool:
        key = {k: attempt.tags[k] for k in KEY}
        return any(
            i.id != attempt.task_id and row_of(i) is not None for i in self.rt.list(tags=key)
        )


#: The tags that decide a run (with ``job`` and ``sweep``): two tasks with the same are one run.
KEY = ("job", "sweep", "variant", "digest", "task", "repeat")


def row_of(info: TaskInfo) -> RunRecord | None:
    """The record of a kept run: the last run of a task its job ended ``done``, annotated
    with its checks (a task cut short, cancelled or refused keeps none: its run is made
    again)."""
    if info.status != "done" or not info.runs:
        return None
    record = info.runs[-1]
    return record if CHECKS in (record.annotations or {}) else None


class _Worker:
    """The evaluation's part of ``python -m agentnb worker``: ``--variants`` and ``--tasks``
    (the sweep's, by name), served as the job :data:`JOB`."""

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--variants", default=None, help="module:attr, a sweep's variants")
        parser.add_argument("--tasks", default=None, help="module:attr, a sweep's tasks")

    def serve(self, rt: Runtime, args: argparse.Namespace) -> None:
        from ..service.worker import load_factory

        variants = load_factory(args.variants, "--variants") if args.variants else {}
        tasks = load_factory(args.tasks, "--tasks") if args.tasks else ()
        if bool(variants) != bool(tasks):
            raise ConfigurationError(
                "--variants and --tasks go together (a sweep's runs need both)"
            )
        if variants:
            task_set = tasks if isinstance(tasks, TaskSet) else TaskSet(list(tasks))
            rt.serve(JOB, Evaluations(rt, variants, task_set))


#: What ``python -m agentnb worker`` adds for sweeps (an ``agentnb.service.worker.Extension``).
WORKER = _Worker()
