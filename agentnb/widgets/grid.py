"""The output grid as a live view: every answer, task × variant, and a person's label on each.

``ev.outputs()`` shows this view in a kernel with the widgets (else the static table of
:mod:`agentnb.evals.outputs`): each answer's first lines (the rest a click away), its failed
checks (a flagged judge's marked ⚑), a conversation's turns folded under its last answer
(each user turn with who played it and its rule, and the answer to it), and under it **✓ / ✗
and a note**: a click labels the run
(``ev.label``: an annotation on its record, written back to the experiment log when the
evaluation is in it), and the label shows at once. The grid's state is a trait, so a saved
notebook shows the answers and labels it had.
"""

from __future__ import annotations

from typing import Any

from ..evals.labels import labels
from ..evals.tables import flagged
from . import payload
from .base import Widget

__all__ = ["OutputsGrid", "grid_state", "run_cell", "talk_cell"]

#: Characters of an answer sent to the browser (the whole answer stays in Python).
LONGEST = 20_000


def run_cell(ev: Any, r: Any) -> dict[str, Any]:
    """One run as a grid cell: its answer, outcome, failed checks and labels."""
    text = r.output or ""
    return {
        "repeat": r.repeat,
        "outcome": r.outcome,
        "output": text[:LONGEST],
        "cut": len(text) > LONGEST,
        "error": r.error,
        "failed": [
            {"name": flagged(ev, c.name), "reason": c.reason, "flag": ev.flags.get(c.name)}
            for c in r.failed_checks
        ],
        "labels": {k: {"verdict": v.verdict, "note": v.note} for k, v in labels(r.run).items()},
        "talk": talk_cell(r),
    }


def talk_cell(r: Any) -> dict[str, Any] | None:
    """A conversation's turns for its cell (folded under the answer): each user turn (who
    played it, its rule) and the answer to it, and how it stopped; None for one request."""
    talk = r.conversation
    if talk is None:
        return None
    said = [{"by": t.by, "rule": t.rule, "text": t.text} for t in talk.user]
    return {
        "stop": talk.stop_reason or "",
        "turns": len(talk),
        "user": said,
        "answers": talk.answers,
    }


def grid_state(
    ev: Any, *, labelling: bool = True, tasks: list[str] | None = None
) -> dict[str, Any]:
    """Every run of ``ev`` as the grid shows it (of ``tasks`` only, when given)."""
    shown = list(ev.tasks.names) if tasks is None else tasks
    cells: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in sorted(ev.records, key=lambda r: r.repeat):
        if r.task in shown:
            cells.setdefault(r.task, {}).setdefault(r.variant, []).append(run_cell(ev, r))
    return {
        "variants": list(ev.variants),
        "tasks": shown,
        "repeats": ev.repeats,
        "runs": len(ev.records),
        "cells": cells,
        "labelling": labelling,
        "experiment": ev.experiment.id if ev.experiment is not None else None,
    }


class OutputsGrid(Widget):
    """The live grid of ``outputs`` (``ev.outputs()``); see the module docstring."""

    def __init__(self, outputs: Any, *, rater: str = "human") -> None:
        self.outputs = outputs
        self.rater = rater
        state = {**grid_state(outputs.evaluation, tasks=outputs.tasks), "what": outputs.what()}
        super().__init__(kind="outputs", data=payload.displayable(state))

    def _on_msg(self, content: dict[str, Any]) -> Any:
        if content.get("op") != "label":
            raise ValueError(f"unknown message from the output grid: {content!r}")
        ev = self.outputs.evaluation
        variant, task = str(content["variant"]), str(content["task"])
        repeat = int(content.get("repeat", 0))
        verdict = content.get("verdict")
        ev.label(variant, task, repeat, verdict, str(content.get("note") or ""), rater=self.rater)
        cell = run_cell(ev, ev.record(variant, task, repeat))
        state = {**grid_state(ev, tasks=self.outputs.tasks), "what": self.outputs.what()}
        self.data = payload.displayable(state)  # a saved notebook shows the labels
        return payload.displayable({"variant": variant, "task": task, "cell": cell})

    def subject(self) -> Any:
        return self.outputs

    def __repr__(self) -> str:
        return f"<OutputsGrid of {self.outputs.evaluation!r}>"
