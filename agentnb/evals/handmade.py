"""A run's record made from a row's figures: a row built by hand, or read from an old file.

A row of an evaluation is a view of its run's record. When there was no run to record (a
row built by hand from results made elsewhere, a row of a file written before runs were the
record: :mod:`agentnb.evals.upgrade`), :func:`made_run` makes the record those figures
describe, through the records' own reader (:meth:`~agentnb.session.RunRecord.from_dict`),
and annotates it with the row's checks; every view then reads it as it reads a real run's.
Its usage holds ``prompt_tokens`` and ``completion_tokens`` (what every turn billed) with
``tokens`` (the task run's total, cache hits included) as its total.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..session import RunRecord, new_run_id, new_trace_id
from .checked import Checked, annotate
from .checks.base import CheckResult

__all__ = ["made_run"]


def made_run(
    figures: Mapping[str, Any],
    tags: dict[str, str],
    *,
    ids: Mapping[str, Any] | None = None,
    **place: Any,
) -> RunRecord:
    """The record ``figures`` describe (a row's: ``outcome``, ``checks``, ``error``,
    ``stop_reason``, ``output``, ``model_calls``, ``tokens``, ``prompt_tokens``,
    ``completion_tokens``, ``latency``, ``model``, ``cached_calls``, ``unmetered``), tagged
    ``tags``, with ``ids`` (``run_id``, ``trace_id``; new ones when none) and ``place``
    (``input``, ``start``, ``end``, ``annotations``) as given."""
    given = ids or {}
    run = RunRecord.from_dict(
        {
            "run_id": given.get("run_id") or new_run_id(),
            "trace_id": given.get("trace_id") or new_trace_id(),
            "input": None,
            **place,
            "output": figures.get("output"),
            "stop_reason": figures.get("stop_reason"),
            "iterations": int(figures.get("model_calls") or 0),
            "usage": {
                "prompt_tokens": int(figures.get("prompt_tokens") or 0),
                "completion_tokens": int(figures.get("completion_tokens") or 0),
                "total_tokens": int(figures.get("tokens") or 0),
            },
            "latency": float(figures.get("latency") or 0.0),
            "model": str(figures.get("model") or ""),
            "cached_calls": int(figures.get("cached_calls") or 0),
            "unmetered": int(figures.get("unmetered") or 0),
            "tags": tags,
        }
    )
    checks: Iterable[CheckResult | Sequence[Any]] = figures.get("checks") or ()
    results = tuple(c if isinstance(c, CheckResult) else CheckResult(*c) for c in checks)
    annotate(run, Checked(figures["outcome"], results, str(figures.get("error") or "")))
    return run
