"""The task log's rows: a task and its attempts' run records as JSON, and back.

One row per task (``agentnb_tasks.body``): its status, its times, why it ended when no run
says, its tags, and one record per run (``RunRecord.to_dict``: every field, its tags and
annotations too; the running attempt's iterations as they are at the write). The task's
``trace_id`` is written for readers of earlier releases; this one reads it from the runs. A
row written by the first release (the outcome inline, attempts as summaries) is read too.
Fields this release does not know are left out, never an error.
"""

from __future__ import annotations

from typing import Any

from ..models import Usage
from ..session import RunRecord
from .tasks import TaskState

__all__ = ["record_from_row", "record_row", "task_from_row", "task_row"]


def task_row(task: TaskState) -> dict[str, Any]:
    """What the task log keeps of ``task`` (JSON-ready)."""
    iterations = task.iterations()
    return {
        "id": task.id,
        "session_id": task.session_id,
        "text": task.text,
        "trace_id": task.trace_id,
        "status": task.status,
        "created": task.created,
        "started": task.started,
        "finished": task.finished,
        "error": task.error,
        "tags": task.tags,
        "runs": [record_row(r, n) for r, n in zip(task.runs, iterations, strict=True)],
    }


def task_from_row(row: dict[str, Any]) -> TaskState:
    """A task as the log kept it."""
    runs = [record_from_row(r) for r in row.get("runs") or ()]
    if "runs" not in row:  # a row of the first release: attempts and the outcome inline
        runs = [_legacy_record(row, a) for a in row.get("attempts") or ()]
    return TaskState(
        id=str(row["id"]),
        session_id=str(row["session_id"]),
        text=str(row["text"]),
        tags={str(k): str(v) for k, v in (row.get("tags") or {}).items()},
        status=row["status"],
        created=float(row["created"]),
        started=row.get("started"),
        finished=row.get("finished"),
        runs=runs,
        error=row.get("error"),
    )


def record_row(record: RunRecord, iterations: int | None = None) -> dict[str, Any]:
    """A run's record as a JSON-ready dict (``RunRecord.to_dict``, the store format of a run's
    record); a running run's iterations are given as they are now."""
    row = record.to_dict()
    if iterations is not None:
        row["iterations"] = iterations
    return row


def record_from_row(row: dict[str, Any]) -> RunRecord:
    """The record :func:`record_row` wrote (or an earlier release: the same fields, fewer)."""
    return RunRecord.from_dict(row)


def _legacy_record(row: dict[str, Any], attempt: dict[str, Any]) -> RunRecord:
    last = attempt.get("attempt") == len(row.get("attempts") or ())
    return RunRecord(
        str(attempt.get("run_id") or ""),
        str(row["trace_id"]),
        None,
        output=row.get("output") if last else None,
        stop_reason=attempt.get("stop_reason"),
        detail=str(attempt.get("error") or ""),
        iterations=int(attempt.get("iteration", 0)),
        usage=Usage(total_tokens=int(attempt.get("tokens", 0))),
        task_id=str(row["id"]),
    )
