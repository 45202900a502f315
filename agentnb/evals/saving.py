"""Saving an evaluation to one JSONL file, and loading it back without any model.

Line 1 is the header (format, settings, variants and what they were, the tasks with their
check records); then one line per run: its record (checks with reasons), its session's
messages in OpenAI shape and the trace of its last turn (the events, each message once:
``save(path, traces=False)`` leaves them out for a smaller file). A loaded evaluation has
every record, check, session and trace: it shows its matrix, compares, builds tool
recordings and replays runs as regression tests; only ``rerun`` needs the agents again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _json
from ..errors import ConfigurationError
from ..session import Session
from ..storage.trace import Trace
from .record import EvalRecord
from .tasks import Task, TaskSet

if TYPE_CHECKING:
    from .evaluation import Evaluation

__all__ = ["FORMAT", "load", "save"]

FORMAT = "agentnb.evaluation/1"


def _task_record(task: Task) -> dict[str, Any]:
    try:
        return task.to_record()
    except ConfigurationError:  # a lambda check or setup: keep the names, not the code
        return {
            "name": task.name,
            "input": task.input,
            "checks": [],
            "tags": list(task.tags),
            "metadata": task.metadata,
            "history": list(task.history),
            "unsaved_checks": [c.name for c in task.checks],
        }


def save(ev: Evaluation, path: Path, *, traces: bool = True) -> Path:
    header = {
        "format": FORMAT,
        "variants": ev.variants,
        "descriptions": ev.descriptions,
        "repeats": ev.repeats,
        "seed": ev.seed,
        "errors": ev.errors,
        "tasks_name": ev.tasks.name,
        "tasks": [_task_record(t) for t in ev.tasks],
    }
    lines = [json.dumps(header, ensure_ascii=False)]
    for r in ev.records:
        session = ev._sessions.get(r.key)
        trace = ev._traces.get(r.key) if traces else None
        entry = {
            "record": r.to_dict(),
            "messages": session.to_openai() if session is not None else None,
            "trace": trace.to_jsonl() if trace is not None else None,
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
    return _json.write_atomically(path, "\n".join(lines) + "\n")


def load(path: Path, *, judge: Any = None) -> Evaluation:
    from .evaluation import Evaluation

    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    try:
        header = json.loads(lines[0])
    except (IndexError, ValueError) as exc:
        raise ConfigurationError(f"{path} is not a saved evaluation ({exc})") from None
    if header.get("format") != FORMAT:
        raise ConfigurationError(f"{path} is not a saved evaluation ({header.get('format')!r})")
    records = [{k: v for k, v in t.items() if k != "unsaved_checks"} for t in header["tasks"]]
    tasks = TaskSet.from_records(records, name=header.get("tasks_name", "tasks"), judge=judge)
    ev = Evaluation(
        header["variants"], tasks, header["repeats"], seed=header["seed"], errors=header["errors"]
    )
    ev.descriptions = header.get("descriptions") or {}
    for number, line in enumerate(lines[1:], 2):
        try:
            entry = json.loads(line)
            record = EvalRecord.from_dict(entry["record"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"{path}:{number}: not a run record ({exc})") from None
        messages, trace = entry.get("messages"), entry.get("trace")
        ev._add(
            record,
            Session(messages) if messages is not None else None,
            Trace.from_jsonl(trace) if trace else None,
        )
    ev._end()
    return ev


def from_records(
    records: Iterable[EvalRecord | dict[str, Any]],
    *,
    tasks: TaskSet | Iterable[Task] | None = None,
    errors: Any = "fail",
    seed: int = 0,
) -> Evaluation:
    from .evaluation import Evaluation

    rows = [r if isinstance(r, EvalRecord) else EvalRecord.from_dict(r) for r in records]
    variants = list(dict.fromkeys(r.variant for r in rows))
    if tasks is None:
        tasks = [Task(name, "") for name in dict.fromkeys(r.task for r in rows)]
    repeats = max((r.repeat for r in rows), default=0) + 1
    ev = Evaluation(variants, tasks, repeats, errors=errors, seed=seed)
    for r in rows:
        ev._add(r, None)
    ev._end()
    return ev
