"""Trajectory diff: 2 to N runs of one task, aligned step by step.

A step is one reply batch (the tool calls of one assistant reply, kept together: calls made in
parallel are one unit), keyed by its calls as ``(name, canonical arguments)``. Every run is
aligned to the first by longest common subsequence (``difflib``), so the rows read as "the
same step in every run", "a step only some runs took" or "the same point, other calls". The
first row where the runs part is their first divergence. Each aligned step carries the
request that produced it, so a reader can see *why* two runs parted: what the model had been
sent (the request diff) and what the tools had answered (the result diff).

    diff = align([session_a, session_b], labels=["article", "vague"])
    diff.first_divergence        # row index, or None when the runs took the same steps
    diff.rows[k].cells[1]        # run 1's step at row k (None: it took no step there)
    diff.request_diff(k, 0, 1)   # what the model saw at that step, run 0 against run 1

Conversations (a task with a user) are aligned by turn, then step: each turn opens with a
*user row* (each run's user message at that turn: the same text, or where the users parted),
and the steps of that turn are aligned among themselves, so a run that needed one more turn
shows it as turns, not as steps smeared over another turn's.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models import json_changes, messages_diff
from ..session import Session
from .batches import PairedCall, batches
from .turns import stop_of, turns_of

__all__ = ["Row", "Step", "Trajectory", "align"]


@dataclass(frozen=True, slots=True)
class Step:
    """One reply batch of one run: its calls, and the model call (from 1) that made them."""

    calls: tuple[PairedCall, ...]
    call_number: int

    @property
    def key(self) -> tuple[tuple[str, str], ...]:
        return tuple(c.key for c in self.calls)

    @property
    def turn(self) -> int:
        return self.calls[0].turn if self.calls else 0

    def label(self) -> str:
        return " ‖ ".join(f"{c.name}({_compact(c.arguments)})" for c in self.calls)


@dataclass(frozen=True, slots=True)
class Row:
    """One aligned step: a cell per run (None where that run took no step here).

    ``status``: ``same`` (every run took this step with the same calls), ``changed`` (every
    run took a step here, not the same one), ``partial`` (some runs only). In a conversation
    ``turn`` is the row's turn, and a *user row* has ``user``: each run's user message at the
    turn (None where the run had none), its cells all None.
    """

    cells: tuple[Step | None, ...]
    status: str
    turn: int = 0
    user: tuple[str | None, ...] | None = None


@dataclass
class Trajectory:
    """The aligned runs: rows, the first divergence, and each run's metrics."""

    labels: list[str]
    sessions: list[Session]
    rows: list[Row]
    metrics: list[dict[str, Any]] = field(default_factory=list)

    @property
    def first_divergence(self) -> int | None:
        """Index of the first row where the runs part (None when they never do)."""
        for i, row in enumerate(self.rows):
            if row.status != "same":
                return i
        answers = {m["output"] for m in self.metrics}
        return len(self.rows) if len(answers) > 1 else None

    def request_diff(self, row: int, a: int = 0, b: int = 1) -> list[dict[str, Any]]:
        """What runs ``a`` and ``b`` had sent to the model when they took row ``row``'s step."""
        return messages_diff(self._request(row, a), self._request(row, b))

    def result_diffs(self, row: int, a: int = 0, b: int = 1) -> list[dict[str, Any]]:
        """Per call of the step, the structural diff of the two runs' tool results."""
        sa, sb = self.rows[row].cells[a], self.rows[row].cells[b]
        if sa is None or sb is None:
            return []
        out = []
        for ca, cb in zip(sa.calls, sb.calls, strict=False):
            out.append({"name": ca.name, "changes": json_changes(ca.result, cb.result)})
        return out

    def call_at(self, row: int, run: int) -> int:
        """The model call of ``run`` at row ``row``: the one that made its step there, or,
        where it took no step, the call that came next (where it did something else)."""
        step = self.rows[row].cells[run]
        if step is not None:
            return step.call_number
        before = [r.cells[run] for r in self.rows[:row] if r.cells[run] is not None]
        return before[-1].call_number + 1 if before else 1  # type: ignore[union-attr]

    def _request(self, row: int, run: int) -> list[dict[str, Any]]:
        requests = self.sessions[run].requests
        k = self.call_at(row, run)
        return list(requests[k - 1].request.messages) if 0 < k <= len(requests) else []

    def payload(self) -> dict[str, Any]:
        """What the TrajectoryDiff widget draws (JSON-ready)."""

        def cell(step: Step | None) -> dict[str, Any] | None:
            if step is None:
                return None
            return {
                "k": step.call_number,
                "calls": [
                    {"name": c.name, "args": c.arguments, "result": c.result, "kind": c.kind}
                    for c in step.calls
                ],
            }

        def row(r: Row) -> dict[str, Any]:
            out: dict[str, Any] = {"status": r.status, "cells": [cell(c) for c in r.cells]}
            if r.user is not None:
                out.update(turn=r.turn, user=list(r.user))
            return out

        return {
            "labels": self.labels,
            "metrics": self.metrics,
            "first": self.first_divergence,
            "rows": [row(r) for r in self.rows],
        }

    def __repr__(self) -> str:
        first = self.first_divergence
        where = "never part" if first is None else f"first part at step {first + 1}"
        return f"<Trajectory of {len(self.sessions)} runs: {len(self.rows)} steps, {where}>"


def align(
    sessions: Sequence[Session],
    labels: Sequence[str] | None = None,
    records: Sequence[Any] | None = None,
) -> Trajectory:
    r"""Align the runs of ``sessions`` (2 or more) step by step; see the module docstring.
    ``records`` (the runs' :class:`~agentnb.evals.EvalRecord`\ s) give the stop reason and
    tokens of a session that keeps no run record (one loaded from a file)."""
    if len(sessions) < 2:
        raise ValueError(f"a trajectory diff needs 2 runs or more, got {len(sessions)}")
    names = list(labels) if labels is not None else [s.id for s in sessions]
    if len(names) != len(sessions):
        raise ValueError(f"{len(names)} labels for {len(sessions)} runs")
    runs = [_steps(s) for s in sessions]
    width = len(sessions)
    if any(turns_of(s) is not None for s in sessions):  # a conversation: by turn, then step
        said = [_user_texts(s) for s in sessions]
        last = max([len(t) for t in said] + [s.turn + 1 for r in runs for s in r])
        rows: list[Row] = []
        for turn in range(last):
            texts = tuple(t[turn] if turn < len(t) else None for t in said)
            rows.append(Row((None,) * width, _status(texts), turn, texts))
            rows += _aligned([[s for s in r if s.turn == turn] for r in runs], turn)
    else:
        rows = _aligned(runs)
    given = list(records) if records is not None else [None] * len(sessions)
    metrics = [_metrics(s, st, r) for s, st, r in zip(sessions, runs, given, strict=True)]
    return Trajectory(names, list(sessions), rows, metrics)


def _status(texts: tuple[str | None, ...]) -> str:
    if None in texts:
        return "partial"
    return "same" if len(set(texts)) == 1 else "changed"


def _user_texts(session: Session) -> list[str]:
    """The user's message of each turn (its input: not the runtime's corrections)."""
    return [m.text for m in session.messages if m.role == "user" and m.name != "agentnb"]


def _aligned(runs: list[list[Step]], turn: int = 0) -> list[Row]:
    """The rows of these runs' steps, each aligned to the first's by longest common
    subsequence (steps only some runs took stand on rows of their own)."""
    reference = runs[0]
    # For every other run: its step matched to each reference step, and the steps it inserted
    # before each reference step (index len(reference) = after the last one).
    matched: list[dict[int, Step]] = []
    inserted: list[dict[int, list[Step]]] = []
    for other in runs[1:]:
        match: dict[int, Step] = {}
        extra: dict[int, list[Step]] = {}
        ops = difflib.SequenceMatcher(None, [s.key for s in reference], [s.key for s in other])
        for op, i1, i2, j1, j2 in ops.get_opcodes():
            if op in ("equal", "replace"):
                paired = min(i2 - i1, j2 - j1)
                for d in range(paired):
                    match[i1 + d] = other[j1 + d]
                extra.setdefault(i1 + paired, []).extend(other[j1 + paired : j2])
            elif op == "insert":
                extra.setdefault(i1, []).extend(other[j1:j2])
        matched.append(match)
        inserted.append(extra)
    rows: list[Row] = []
    width = len(runs)
    for i in range(len(reference) + 1):
        for run, extra in enumerate(inserted, 1):
            for step in extra.get(i, ()):
                cells: list[Step | None] = [None] * width
                cells[run] = step
                rows.append(Row(tuple(cells), "partial", turn))
        if i == len(reference):
            break
        row_cells = (reference[i], *(m.get(i) for m in matched))
        present = [c for c in row_cells if c is not None]
        if len(present) < width:
            status = "partial"
        else:
            status = "same" if len({c.key for c in present}) == 1 else "changed"
        rows.append(Row(row_cells, status, turn))
    return rows


def _steps(session: Session) -> list[Step]:
    """The session's reply batches, each with the number of the model call that made it."""
    numbers = []
    k = 0
    for m in session.messages:
        if m.role == "assistant":
            k += 1
            if getattr(m, "tool_calls", None):
                numbers.append(k)
    return [Step(tuple(b), n) for b, n in zip(batches(session.messages), numbers, strict=True)]


def _metrics(session: Session, steps: list[Step], kept: Any = None) -> dict[str, Any]:
    record = session.runs[-1] if session.runs else None
    calls = [c for s in steps for c in s.calls]
    output = None
    for m in reversed(session.messages):
        if m.role == "assistant" and not getattr(m, "tool_calls", None):
            output = m.text
            break
    return {
        "steps": len(steps),
        "tool_calls": len(calls),
        "tool_errors": sum(c.kind is not None for c in calls),
        "model_calls": sum(m.role == "assistant" for m in session.messages),
        "tokens": record.usage.total_tokens if record is not None else getattr(kept, "tokens", 0),
        "stop_reason": stop_of(record)
        if record is not None
        else getattr(kept, "stop_reason", None),
        "output": output,
    }


def _compact(arguments: str) -> str:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    if isinstance(value, dict):
        return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    return arguments
