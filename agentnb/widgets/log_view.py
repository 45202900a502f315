"""The experiment log as a live view: every experiment, filtered, and any two side by side.

Evaluating an :class:`~agentnb.evals.ExperimentLog` in a cell (or
``an.widgets.ExperimentsView(log)``) shows a table of the log's experiments (when, kind,
variants and their success, the tasks' digest, spend, commit, note) with a text filter and a
kind filter. Tick two rows, pick a variant of each, and **Open side by side** shows their
prompt diff, the paired verdict on the tasks they share (``an.evals.compare``) and the output
grid of both (read only). A pair that cannot be compared says why.
"""

from __future__ import annotations

from typing import Any

from ..evals.log import ExperimentLog, experiments, joined
from ..evals.log.recording import chosen
from . import payload
from .base import Widget
from .grid import grid_state

__all__ = ["ExperimentsView", "side_by_side"]


def side_by_side(log: ExperimentLog, a: str, b: str, va: str, vb: str) -> dict[str, Any]:
    """Two experiments' variants compared: the prompt diff, the verdict, the grid of both."""
    both = joined(a, b, baseline=va, other=vb, log=log)
    c = both.compare(both.variants[0], both.variants[1])
    detail = (
        f"{c.tasks} shared tasks, {c.pairs} pairs: {c.other} {c.wins} wins, {c.losses} losses, "
        f"{c.ties} ties; difference {c.difference:+.0%} ({1 - c.alpha:.0%} CI {c.ci_low:+.0%} "
        f"to {c.ci_high:+.0%}); p = {c.p:.3g} ({c.method})"
    )
    shown: dict[str, Any] = payload.displayable(
        {
            "a": a,
            "b": b,
            "baseline": c.baseline,
            "other": c.other,
            "verdict": c.verdict,
            "detail": detail,
            "prompt_diff": c.prompt_diff,
            "grid": grid_state(both, labelling=False),
        }
    )
    return shown


class ExperimentsView(Widget):
    """The live view of the experiment log ``log`` (the default place when None)."""

    def __init__(self, log: Any = None) -> None:
        self.experiment_log = chosen(log, reading=True)
        super().__init__(kind="experiments", data=self.state())

    def state(self) -> dict[str, Any]:
        frame = experiments(self.experiment_log) if self.experiment_log is not None else None
        rows = []
        if frame is not None:
            for row in frame.to_dict(orient="records"):
                row["created"] = str(row["created"])[:19]
                rows.append({k: (None if v != v else v) for k, v in row.items()})  # NaN: None
        where = self.experiment_log.where if self.experiment_log is not None else "no log here yet"
        shown: dict[str, Any] = payload.displayable({"rows": rows, "where": where})
        return shown

    def _on_msg(self, content: dict[str, Any]) -> Any:
        op = content.get("op")
        if op == "refresh":
            self.data = self.state()
            return self.data
        if op == "open":
            if self.experiment_log is None:
                raise ValueError("there is no experiment log to open experiments from")
            try:
                return side_by_side(
                    self.experiment_log,
                    str(content["a"]),
                    str(content["b"]),
                    str(content["va"]),
                    str(content["vb"]),
                )
            except Exception as exc:  # no shared task, a variant gone: say why in the view
                return {"error": f"{type(exc).__name__}: {exc}"}
        raise ValueError(f"unknown message from the experiment log view: {content!r}")

    def subject(self) -> Any:
        return self.experiment_log

    def __repr__(self) -> str:
        return f"<ExperimentsView of {self.experiment_log!r}>"
