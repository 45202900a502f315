"""Views of evaluations: the live variant × task matrix, and the trajectory diff of runs.

- :class:`EvalMatrix` - a cell per (task, variant), coloured by outcome (``k/k`` with
  repeats), filling in while the sweep runs; the summary row per variant with its interval;
  Stop; a click on a cell opens that run (its messages as cards, its failed checks).
- :class:`TrajectoryDiff` - 2 to N runs of one task aligned step by step (reply batches as
  units, by longest common subsequence), the first divergence marked; a click on a step
  shows what each run had sent the model there and how the tool results differed.

Updates are batched: one small message per ``every`` seconds carries only the cells that
changed, so a 600-run sweep costs a few hundred bytes per finished run (``sent_bytes``).
"""

from __future__ import annotations

import math
import weakref
from typing import Any, ClassVar

from ..evals.trajectory import Trajectory, align
from . import payload
from .base import Following, Throttle, Widget

__all__ = ["EvalMatrix", "TrajectoryDiff", "run_payload", "step_payload"]

#: Summary columns the matrix shows per variant (k is the evaluation's repeats).
SUMMARY = ("n", "passed", "failed", "errors", "success_rate", "ci_low", "ci_high", "spend")


def _clean(value: Any) -> Any:
    """JSON-ready: NaN becomes None, numpy scalars plain numbers."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def summary_rows(ev: Any) -> list[dict[str, Any]]:
    """The summary table as rows (variant first), with pass@k / pass^k when k > 1."""
    frame = ev.summary
    k = ev.repeats
    columns = [*SUMMARY, f"pass@{k}", f"pass^{k}"] if k > 1 else list(SUMMARY)
    rows = []
    for variant, row in frame.iterrows():
        rows.append({"variant": str(variant), **{c: _clean(row.get(c)) for c in columns}})
    return rows


def run_payload(ev: Any, variant: str, task: str, repeat: int) -> dict[str, Any]:
    """One run as the matrix opens it: its record, failed checks and messages (as cards)."""
    record = ev.record(variant, task, repeat)
    try:
        session = ev.session(variant, task, repeat)
    except KeyError:
        wires: list[Any] = []
    else:
        wires = session.wire()
    return {
        "variant": variant,
        "task": task,
        "repeat": repeat,
        "outcome": record.outcome,
        "stop_reason": record.stop_reason,
        "error": record.error,
        "checks": [
            {"name": c.name, "passed": c.passed, "reason": c.reason, "flag": ev.flags.get(c.name)}
            for c in record.checks
        ],
        "messages": [{"w": w} for w in wires],
    }


def step_payload(trajectory: Trajectory, content: dict[str, Any]) -> dict[str, Any]:
    """One aligned step compared: the request diff and the tool-result diffs of runs a, b."""
    row, a, b = int(content["row"]), int(content.get("a", 0)), int(content.get("b", 1))
    out: dict[str, Any] = payload.displayable(
        {
            "row": row,
            "request": trajectory.request_diff(row, a, b),
            "results": trajectory.result_diffs(row, a, b),
        }
    )
    return out


class EvalMatrix(Following):
    """The live matrix of ``evaluation`` (see the module docstring).

    Args:
        evaluation: an :class:`~agentnb.Evaluation`, running or done.
        every: seconds between two batched updates while the sweep runs.
    """

    #: The matrix shown for an evaluation in the cell that showed it: ``ev = await
    #: an.evaluate(...)`` shows the live matrix, and ``ev`` at the end of the same cell
    #: would show a second one.
    _shown: ClassVar[weakref.WeakKeyDictionary[Any, tuple[int | None, EvalMatrix]]] = (
        weakref.WeakKeyDictionary()
    )

    @classmethod
    def for_cell(cls, evaluation: Any) -> EvalMatrix | None:
        """A new matrix of ``evaluation`` to show, or None when this cell already shows one."""
        cell = _cell()
        shown = cls._shown.get(evaluation)
        if shown is not None and cell is not None and shown[0] == cell:
            return None
        matrix = cls(evaluation)
        cls._shown[evaluation] = (cell, matrix)
        return matrix

    def __init__(self, evaluation: Any, *, every: float = 0.25) -> None:
        self.evaluation = evaluation
        self.sent_bytes = 0
        self.updates = 0
        self._pending: dict[tuple[str, str], list[int]] = {}
        self._throttle = Throttle(every, self.flush)
        self._trajectories: dict[tuple[str, int], Trajectory] = {}
        super().__init__(kind="matrix", data=self.state())
        self._unsubscribe = evaluation.subscribe(self._on_record)

    # -- state ----------------------------------------------------------------------------
    def cells(self) -> dict[str, dict[str, list[int]]]:
        """task -> variant -> [passed, failed, errors] over the finished repeats."""
        out: dict[str, dict[str, list[int]]] = {}
        for r in self.evaluation.records:
            cell = out.setdefault(r.task, {}).setdefault(r.variant, [0, 0, 0])
            cell[("pass", "fail", "error").index(r.outcome)] += 1
        return out

    def state(self) -> dict[str, Any]:
        ev = self.evaluation
        return {
            "variants": list(ev.variants),
            "tasks": list(ev.tasks.names),
            "repeats": ev.repeats,
            "total": ev.total,
            "finished": len(ev.records),
            "done": ev.done,
            "stopped": ev.cancelled,
            "cells": self.cells(),
            "summary": summary_rows(ev) if ev.records else [],
            "caption": ev.summary.attrs.get("caption", "") if ev.records else "",
        }

    # -- live updates ---------------------------------------------------------------------
    def _on_record(self, record: Any) -> None:
        if record is not None:
            cell = self._pending.setdefault((record.task, record.variant), [0, 0, 0])
            cell[("pass", "fail", "error").index(record.outcome)] += 1
        if record is None:
            self.flush()
        else:
            self._throttle.soon()

    def flush(self) -> None:
        """Send what changed since the last update: the cells, the counts and the summary
        of the same runs (at most one update per ``every`` seconds while the sweep runs)."""
        self._throttle.cancel()
        ev = self.evaluation
        totals = self.cells()
        changed = {f"{t}\u0000{v}": totals[t][v] for t, v in self._pending}
        self._pending = {}
        msg: dict[str, Any] = {
            "op": "cells",
            "cells": changed,
            "finished": len(ev.records),
            "done": ev.done,
            "stopped": ev.cancelled,
            # the summary of exactly the runs the cells show: it never lags the matrix
            "summary": summary_rows(ev) if ev.records else [],
            "caption": ev.summary.attrs.get("caption", "") if ev.records else "",
        }
        self._post(msg)
        if ev.done:
            self.data = self.state()  # the saved notebook shows the finished matrix

    def _post(self, msg: dict[str, Any]) -> None:
        self.updates += 1
        msg, n = payload.sendable(msg)
        self.sent_bytes += n
        self.send(msg)

    # -- the browser ----------------------------------------------------------------------
    def _on_msg(self, content: dict[str, Any]) -> Any:
        op = content.get("op")
        if op == "hello":
            self._post({"op": "state", "data": self.state()})
            return None
        if op == "stop":
            self.evaluation.cancel()
            return None
        if op == "open":
            return run_payload(
                self.evaluation,
                str(content["variant"]),
                str(content["task"]),
                int(content.get("repeat", 0)),
            )
        if op in ("diff", "step"):
            trajectory = self._trajectory(str(content["task"]), int(content.get("repeat", 0)))
            if op == "diff":
                return payload.displayable(trajectory.payload())
            return step_payload(trajectory, content)
        raise ValueError(f"unknown message from the matrix: {content!r}")

    def _trajectory(self, task: str, repeat: int) -> Trajectory:
        key = (task, repeat)
        found = self._trajectories.get(key)
        if found is None:
            ev = self.evaluation
            names = [v for v in ev.variants if (v, task, repeat) in {r.key for r in ev.records}]
            sessions = [ev.session(v, task, repeat) for v in names]
            records = [ev.record(v, task, repeat) for v in names]
            found = self._trajectories[key] = align(sessions, names, records)
        return found

    def subject(self) -> Any:
        return self.evaluation

    def __repr__(self) -> str:
        return f"<EvalMatrix of {self.evaluation!r}>"


def _cell() -> int | None:
    """The execution count of the cell running now (None outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return getattr(shell, "execution_count", None) if shell is not None else None


class TrajectoryDiff(Widget):
    """``sessions`` (2 or more runs of one task) aligned step by step.

    Args:
        sessions: the runs' sessions (``ev.session(variant, task)``, or any sessions).
        labels: a name per run (the variant names; session ids by default).
        records: the runs' EvalRecords (stop reason and tokens of sessions loaded from a
            file, which keep no run records).
    """

    def __init__(self, sessions: Any, *, labels: Any = None, records: Any = None) -> None:
        self.trajectory: Trajectory = align(list(sessions), labels, records)
        super().__init__(kind="trajectory", data=payload.displayable(self.trajectory.payload()))

    @classmethod
    def of(
        cls, evaluation: Any, task: Any, variants: Any = None, repeat: int = 0
    ) -> TrajectoryDiff:
        """The runs of ``task`` (a Task or its name) in ``evaluation``, one per variant (all
        of them by default), repeat ``repeat``: what ``ev.diff(task)`` shows."""
        chosen = list(variants) if variants is not None else list(evaluation.variants)
        sessions = [evaluation.session(v, task, repeat) for v in chosen]
        records = [evaluation.record(v, task, repeat) for v in chosen]
        return cls(sessions, labels=chosen, records=records)

    @property
    def first_divergence(self) -> int | None:
        return self.trajectory.first_divergence

    def _on_msg(self, content: dict[str, Any]) -> Any:
        if content.get("op") == "step":
            return step_payload(self.trajectory, content)
        raise ValueError(f"unknown message from the trajectory diff: {content!r}")

    def __repr__(self) -> str:
        return f"<TrajectoryDiff {self.trajectory!r}>"
