"""An optimisation's tables and summary: the history, one row per candidate, a few lines, and
its static form (what a saved notebook shows without the live view)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...display import escape
from ..cost import money
from .wording import counted

if TYPE_CHECKING:
    import pandas as pd

    from .optimisation import Optimisation

__all__ = [
    "STEP_COLUMNS",
    "candidates_frame",
    "gated",
    "history",
    "static_html",
    "summary",
    "unproven",
]

STEP_COLUMNS = [
    "step",
    "event",
    "parent",
    "candidate",
    "minibatch",
    "parent_score",
    "candidate_score",
    "train_success",
    "validation",
    "p",
    "metric_calls",
    "calls_used",
    "proposer_calls",
    "reason",
]


def history(opt: Optimisation) -> pd.DataFrame:
    import pandas as pd

    rows = [{c: s.get(c) for c in STEP_COLUMNS} for s in opt.steps]
    return pd.DataFrame(rows, columns=STEP_COLUMNS)


def candidates_frame(opt: Optimisation) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for c in opt.candidates:
        rows.append(
            {
                "candidate": c.id,
                "parent": c.parent,
                "status": c.status,
                "train_score": c.train_score if c.scores else math.nan,
                "train_success": c.train_success if c.successes else math.nan,
                "validation": c.validation if c.validation is not None else math.nan,
                "p": (c.gate or {}).get("p", math.nan),
                "calls": c.calls,
                "reason": c.reason,
                "rationale": c.rationale,
            }
        )
    return pd.DataFrame(rows).set_index("candidate") if rows else pd.DataFrame()


def gated(opt: Optimisation) -> str:
    """How many candidates the gate tested, and what that bounds: each gate is one test at
    α on the same validation tasks, so the chance that some promotion is no better than what
    it replaced is at most gated × α (Bonferroni)."""
    k, alpha = opt.gated, opt.alpha
    if k == 0:
        return "none gated, so none promoted"
    if k == 1:
        return (
            f"1 gated, a test at α = {alpha:g}: at most a {_pct(alpha)} chance that a promotion "
            "is no better than what it replaced"
        )
    bound = k * alpha
    if bound >= 1:
        return (
            f"{k} gated, each a test at α = {alpha:g}: {k} × {alpha:g} ≥ 1 bounds nothing (a "
            "lower alpha bounds the chance that a promotion is no better)"
        )
    return (
        f"{k} gated, each a test at α = {alpha:g}: at most a {_pct(bound)} chance ({k} × "
        f"{alpha:g}) that any promotion is no better than what it replaced"
    )


def _pct(share: float) -> str:
    return f"{share * 100:.3g}%"


def summary(opt: Optimisation) -> str:
    seed, best = (opt.candidates[0] if opt.candidates else None), opt.best
    lines = [
        f"optimisation: {opt.stop_reason or 'running'}; {opt.metric_calls}/{opt.budget} metric "
        f"calls, {counted(len(opt.candidates), 'candidate')}, {gated(opt)}",
    ]
    if seed is not None and seed.validation is not None and best.validation is not None:
        lines.append(
            f"validation success: {seed.validation:.0%} (c0, the agent as given) → "
            f"{best.validation:.0%} ({best.id}, lineage {' → '.join(opt.lineage())})"
        )
    if best.gate:
        lines.append(f"{best.id}'s gate: {best.gate['verdict']}")
    strongest = opt.best_unproven
    for held in opt.candidates:  # better on the held-out tasks, but without the evidence
        if held.status == "held" and (held.validation or 0) > (best.validation or 0) and held.gate:
            verdict = held.gate["verdict"]
            mark = ", opt.best_unproven" if held is strongest else ""
            lines.append(
                f"held back: {held.id} (validation {held.validation:.0%}{mark}): {verdict}"
            )
    p, c = opt.proposer_tokens
    lines.append(
        f"task runs spent {money(opt.spend)}; the proposer {counted(opt.proposer_calls, 'call')}, "
        f"{counted(p + c, 'token')}, {money(opt.proposer_spend)} (apart, not metric calls)"
    )
    for w in opt.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def unproven(opt: Optimisation) -> dict[str, Any] | None:
    """``opt.best_unproven``'s texts as a file records them, labelled: ``"unproven": true``,
    why (the gate's verdict), and its validation success beside the incumbent's."""
    c = opt.best_unproven
    if c is None:
        return None
    best = opt.best
    return {
        "unproven": True,
        "label": (
            f"UNPROVEN: candidate {c.id} did better than the incumbent {best.id} on the "
            "held-out tasks, but the gate did not promote it: test it on more tasks before "
            "trusting it"
        ),
        "candidate": c.id,
        "status": c.status,
        "validation": c.validation,
        "incumbent": best.id,
        "incumbent_validation": best.validation,
        "gate": (c.gate or {}).get("verdict", ""),
        **c.texts.to_dict(),
    }


def _cell(value: Any) -> str:
    """A share in a table cell: '' when there is none (None or NaN)."""
    return "" if value is None or value != value else f"{value:.0%}"


def static_html(opt: Optimisation) -> str:
    """Its warnings, summary and candidates as escaped HTML: what nbviewer and GitHub show."""
    e = escape
    rows = "".join(
        f"<tr><td>{e(c.id)}</td><td>{e(c.parent or '—')}</td><td>{e(c.status)}</td>"
        f"<td>{_cell(c.train_success if c.successes else None)}</td>"
        f"<td>{_cell(c.validation)}</td><td>{e(c.reason)}</td></tr>"
        for c in opt.candidates
    )
    summary = "<br>".join(e(line) for line in opt.summary().split("\n")) if opt.candidates else ""
    warned = "".join(f"<p class='anb-warn'>⚠ {e(w)}</p>" for w in opt.warnings)
    return (
        f"<div class='agentnb-optimise'>{warned}<p>{summary}</p><table><tr><th>candidate</th>"
        "<th>parent</th><th>status</th><th>training success</th><th>validation</th>"
        f"<th>why</th></tr>{rows}</table></div>"
    )
