"""How an optimisation shows without the live view: escaped HTML and a plain summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import display
from ..._html import escape

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["show", "static_bundle"]


def _pct(value: Any) -> str:
    return "" if value is None or value != value else f"{value:.0%}"


def static_bundle(opt: Optimisation) -> dict[str, str]:
    e = escape
    rows = "".join(
        f"<tr><td>{e(c.id)}</td><td>{e(c.parent or '—')}</td><td>{e(c.status)}</td>"
        f"<td>{_pct(c.train_success if c.successes else None)}</td>"
        f"<td>{_pct(c.validation)}</td><td>{e(c.reason)}</td></tr>"
        for c in opt.candidates
    )
    summary = "<br>".join(e(line) for line in opt.summary().split("\n")) if opt.candidates else ""
    warned = "".join(f"<p class='anb-warn'>⚠ {e(w)}</p>" for w in opt.warnings)
    html = (
        f"<div class='agentnb-optimise'>{warned}<p>{summary}</p><table><tr><th>candidate</th>"
        "<th>parent</th><th>status</th><th>training success</th><th>validation</th>"
        f"<th>why</th></tr>{rows}</table></div>"
    )
    return {"text/plain": repr(opt), "text/html": html}


def show(opt: Optimisation) -> None:
    """The live view when the widgets are installed, else the static table."""
    try:
        widgets = display.widgets("the optimiser's live view")
    except ImportError:
        widgets = None
    if widgets is not None and hasattr(widgets, "OptimiseView"):
        display.show(widgets.OptimiseView(opt))
    else:
        display.show(static_bundle(opt))
