"""The task log's rows: a task and its attempts' run records as JSON, and back.

One row per task (``agentnb_tasks.body``): its status, its times, why it ended when no run
says, its tags, and one record per attempt (a :class:`~agentnb.session.RunRecord` as a dict:
every field, its tags and annotations too; the running attempt's iterations as they are at
the write). The task's ``trace_id`` is written for readers of earlier releases; this one
reads it from the runs. A row written by the first release (the outcome inline, attempts as
summaries) is read too. Fields this release does not know are left out, never an error.
"""

from __future__ import annotations

from typing import Any

from ..models import Usage
from ..session import RunRecord
from .tasks import TaskState

__all__ = ["record_from_row", "record_row", "task_from_row", "task_row"]


def task_row(task: TaskState) -> dict[str, Any]:
    """What the task log keeps of ``task`` (JSON-ready)."""
    figures = task.figures()
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
        "runs": [record_row(r, *f) for r, f in zip(task.runs, figures, strict=True)],
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


def record_row(
    record: RunRecord, iterations: int | None = None, usage: Usage | None = None
) -> dict[str, Any]:
    """A run's record as a JSON-ready dict (:func:`record_from_row` reverses it); a running
    run's figures are given as they are now."""
    cached = record.cached
    return {
        "run_id": record.run_id,
        "trace_id": record.trace_id,
        "task_id": record.task_id,
        "input": record.input,
        "start": record.start,
        "end": record.end,
        "output": record.output,
        "stop_reason": record.stop_reason,
        "detail": record.detail,
        "stage": record.stage,
        "iterations": record.iterations if iterations is None else iterations,
        "usage": _usage_row(usage or record.usage),
        "started": record.started,
        "tags": record.tags,
        "model": record.model,
        "cached_calls": record.cached_calls,
        "cached": None if cached is None else _usage_row(cached),
        "unmetered": record.unmetered,
        "latency": record.latency,
        "annotations": record.annotations,
    }


def _usage_row(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "estimated": usage.estimated,
    }


def _usage(row: dict[str, Any] | None) -> Usage:
    row = row or {}
    return Usage(
        int(row.get("prompt_tokens", 0)),
        int(row.get("completion_tokens", 0)),
        int(row.get("total_tokens", 0)),
        bool(row.get("estimated", False)),
    )


def record_from_row(row: dict[str, Any]) -> RunRecord:
    cached = row.get("cached")
    return RunRecord(
        str(row["run_id"]),
        str(row["trace_id"]),
        row.get("input"),
        start=row.get("start"),
        end=int(row.get("end", -1)),
        output=row.get("output"),
        stop_reason=row.get("stop_reason"),
        detail=str(row.get("detail") or ""),
        stage=row.get("stage"),
        iterations=int(row.get("iterations", 0)),
        usage=_usage(row.get("usage")),
        started=float(row.get("started") or 0.0),
        task_id=row.get("task_id"),
        tags={str(k): str(v) for k, v in (row.get("tags") or {}).items()},
        model=str(row.get("model") or ""),
        cached_calls=int(row.get("cached_calls", 0)),
        cached=None if cached is None else _usage(cached),
        unmetered=int(row.get("unmetered", 0)),
        latency=float(row.get("latency") or 0.0),
        annotations=row.get("annotations"),
    )


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
