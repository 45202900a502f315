"""How an Evaluation shows: the live matrix when the widgets are there, else static HTML.

The static form (``text/plain`` + escaped ``text/html``: the summary with its caption and
the task × variant grid, k/k per cell with repeats) is what nbviewer and GitHub render.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import display
from .._html import escape
from . import tables
from .cost import money

if TYPE_CHECKING:
    from .evaluation import Evaluation

__all__ = ["grid", "show", "static_bundle"]

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


def static_bundle(ev: Evaluation) -> dict[str, str]:
    summary = ev.summary
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
    html = (
        f"<div class='agentnb-evaluation'><p>{escape(repr(ev))}</p>"
        f"<table style='font-size:12px'><caption style='text-align:left'>{caption}</caption>"
        f"<tr>{head}</tr>{body}</table><table style='font-size:12px'>{matrix}</table></div>"
    )
    text = repr(ev) + "\n" + (summary.to_string() if len(summary) else "")
    return {"text/plain": text + "\n" + tables.caption(ev), "text/html": html}


def show(ev: Evaluation) -> None:
    """Display ``ev``: ``agentnb.widgets.EvalMatrix`` when available (once per cell: the
    live matrix ``evaluate`` showed is not shown again by ``ev`` below it), else static."""
    try:
        matrices = display.widgets().EvalMatrix
    except (ImportError, AttributeError):
        display.show(static_bundle(ev), raw=True)
        return
    matrix = matrices.for_cell(ev)
    if matrix is not None:
        display.show(matrix)
