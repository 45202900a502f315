"""How an Evaluation shows without the live matrix: its static form.

``text/plain`` + escaped ``text/html`` (:func:`agentnb.display.static`): the summary with its
caption and the task × variant grid, k/k per cell with repeats; what nbviewer and GitHub
render. In a kernel with the widgets the live matrix shows instead (:mod:`agentnb.display`).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from ..display import escape, static
from . import tables
from .cost import money

if TYPE_CHECKING:
    from .evaluation import Evaluation

__all__ = ["grid", "static_bundle"]

_COLOURS = {"pass": "#16a34a", "fail": "#dc2626", "error": "#9ca3af", "mixed": "#f59e0b"}


def grid(ev: Evaluation) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(task, variant) -> (passed, failed, errors) over the finished repeats."""
    cells: dict[tuple[str, str], list[int]] = {}
    for r in ev.records:
        cell = cells.setdefault((r.task, r.variant), [0, 0, 0])
        cell[("pass", "fail", "error").index(r.outcome)] += 1
    return {k: (v[0], v[1], v[2]) for k, v in cells.items()}


def _number(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3g}"
    return str(value)


def static_bundle(
    ev: Evaluation, include: Collection[str] | None = None, exclude: Collection[str] | None = None
) -> dict[str, str]:
    """The evaluation's static bundle (see the module docstring)."""
    summary = ev.summary

    def text() -> str:
        table = summary.to_string() if len(summary) else ""
        return f"{ev!r}\n{table}\n{tables.caption(ev)}"

    return static(text, lambda: _html(ev, summary), include=include, exclude=exclude)


def _html(ev: Evaluation, summary: Any) -> str:
    columns = [
        "n",
        "passed",
        "failed",
        "errors",
        "success_rate",
        "ci_low",
        "ci_high",
        f"pass@{ev.repeats}",
        f"pass^{ev.repeats}",
        "mean_steps",
        "tool_error_rate",
        "spend",
    ]
    head = "".join(f"<th>{escape(c)}</th>" for c in ["variant", *columns])
    body = ""
    for variant, row in summary.iterrows() if len(summary) else ():
        cells = "".join(
            f"<td>{escape(money(row[c]) if c == 'spend' else _number(row[c]))}</td>"
            for c in columns
        )
        body += f"<tr><th>{escape(str(variant))}</th>{cells}</tr>"
    counts = grid(ev)
    matrix = "<tr><th>task</th>" + "".join(f"<th>{escape(v)}</th>" for v in ev.variants)
    matrix += "</tr>"
    for task in ev.tasks.names:
        matrix += f"<tr><td style='text-align:left'>{escape(task)}</td>"
        for v in ev.variants:
            p, f, e = counts.get((task, v), (0, 0, 0))
            done = p + f + e
            state = (
                ("pass" if p == done else "error" if e == done else "fail" if p == 0 else "mixed")
                if done
                else ""
            )
            style = f"background:{_COLOURS[state]};color:white" if state else ""
            label = f"{p}/{done}" if ev.repeats > 1 else (state or "…")
            matrix += f"<td style='{style};text-align:center'>{escape(label)}</td>"
        matrix += "</tr>"
    caption = escape(tables.caption(ev))
    return (
        f"<div class='agentnb-evaluation'><p>{escape(repr(ev))}</p>"
        f"<table style='font-size:12px'><caption style='text-align:left'>{caption}</caption>"
        f"<tr>{head}</tr>{body}</table><table style='font-size:12px'>{matrix}</table></div>"
    )
