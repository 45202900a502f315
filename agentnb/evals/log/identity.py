"""What identifies an experiment: the texts of its variants, its tasks, its code, its figures.

Kept in the log's body of each experiment (:mod:`.store`), so two experiments can be told
apart and matched without reading their runs:

* each variant as it was (instructions, model, model settings, tool descriptions: what
  ``ev.descriptions`` keeps) and its **digest** (sha256 of that, canonical JSON, 12 hex
  digits): two variants with one digest sent the model the same texts;
* the **task set's digest** and each task's (name, input, history, checks, tags: a task
  with the same name and another input or check has another digest), and the tasks
  themselves with their checks, as a saved evaluation keeps them; a check that cannot be
  kept (a lambda) is named in ``unkept`` instead (its results stay on each run);
* the **code's version**: the git commit of the working directory and whether tracked files
  had changed (``dirty``), or None outside a repository;
* the figures a listing shows: each variant's runs, passes and success rate, the spend.
  They summarise the runs linked to the experiment, which stay the truth.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from ..checks.base import Check

if TYPE_CHECKING:
    from ..evaluation import Evaluation
    from ..tasks import Task, TaskSet

__all__ = ["code_version", "digest", "identify", "keepable_tasks"]


def digest(value: Any) -> str:
    """12 hex digits of the sha256 of ``value`` as canonical JSON."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def code_version(where: Path | None = None) -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the git repository ``where`` (the working
    directory) is in; ``{"commit": None, "dirty": None}`` outside one or without git. Dirty:
    a tracked file differs from the commit (untracked files, the log's own among them, do not
    count)."""
    cwd = str(where or Path.cwd())
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    dirty = bool(changed.stdout.strip()) if changed.returncode == 0 else None
    return {"commit": head.stdout.strip(), "dirty": dirty}


def _check_record(check: Check) -> tuple[dict[str, Any], bool]:
    try:
        return check.to_dict(), True
    except ConfigurationError:
        return {"check": check.kind, "name": check.name}, False


def _task_record(task: Task) -> tuple[dict[str, Any], list[str]]:
    """The task as a saved evaluation keeps it, its unkeepable checks left out and named."""
    checks, unkept = [], []
    for c in task.checks:
        record, ok = _check_record(c)
        if ok:
            checks.append(record)
        else:
            unkept.append(c.name)
    try:
        bare = task.model_copy(update={"checks": ()}).to_dict()
    except ConfigurationError as exc:  # a setup or tools factory that cannot be kept
        bare = {"name": task.name, "input": task.input, "tags": list(task.tags)}
        unkept.append(f"setup/tools ({exc})")
    return {**bare, "checks": checks}, unkept


def keepable_tasks(
    tasks: TaskSet,
) -> tuple[list[dict[str, Any]], dict[str, list[str]], dict[str, str]]:
    """The tasks as dicts, what of each could not be kept, and each task's digest."""
    records, unkept, digests = [], {}, {}
    for task in tasks:
        record, lost = _task_record(task)
        records.append(record)
        if lost:
            unkept[task.name] = lost
        every = [_check_record(c)[0] for c in task.checks]
        digests[task.name] = digest(
            {k: record.get(k) for k in ("name", "input", "history", "tags", "metadata")}
            | {"checks": every}
        )
    return records, unkept, digests


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def identify(ev: Evaluation, version: dict[str, Any]) -> dict[str, Any]:
    """The body of ``ev``'s entry in the log (see the module docstring)."""
    tasks, unkept, task_digests = keepable_tasks(ev.tasks)
    variants = {
        name: {**ev.descriptions.get(name, {}), "digest": digest(ev.descriptions.get(name, {}))}
        for name in ev.variants
    }
    summary = ev.summary if ev.records else None
    figures: dict[str, dict[str, Any]] = {}
    if summary is not None:
        for name, row in summary.iterrows():
            figures[str(name)] = {
                "runs": int(row["runs"]),
                "passed": int(row["passed"]),
                "success_rate": _number(row["success_rate"]),
                "spend": _number(row["spend"]),
            }
    spends = [f["spend"] for f in figures.values()]
    return {
        "variants": variants,
        "variant_order": list(ev.variants),
        "tasks_name": ev.tasks.name,
        "tasks": tasks,
        "unkept": unkept,
        "task_digests": task_digests,
        "tasks_digest": digest(sorted(task_digests.items())),
        "repeats": ev.repeats,
        "seed": ev.seed,
        "errors": ev.errors,
        "runs": len(ev.records),
        "total": ev.total,
        "partial": bool(ev.cancelled and len(ev.records) < ev.total),
        "summary": figures,
        "spend": None if any(s is None for s in spends) else sum(s or 0.0 for s in spends),
        "flags": dict(ev.flags),
        **version,
    }
