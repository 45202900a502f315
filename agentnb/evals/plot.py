"""Evaluation.plot(): success rate with its interval per variant, and the task × variant grid."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .view import grid

if TYPE_CHECKING:
    from .evaluation import Evaluation

__all__ = ["plot"]


def plot(ev: Evaluation, *, figsize: tuple[float, float] | None = None) -> Any:
    """A matplotlib figure: left, success rate and 95% interval per variant; right, the
    share of passing repeats per (task, variant). Needs matplotlib (``agentnb[notebooks]``)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        why = f"Evaluation.plot() needs matplotlib ({exc}); pip install matplotlib"
        raise ImportError(why) from None
    summary = ev.summary
    tasks = ev.tasks.names
    height = max(3.0, 0.25 * len(tasks) + 1.5)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=figsize or (11, height), gridspec_kw={"width_ratios": [1, 1.4]}
    )
    names = list(summary.index)
    rates = [float(summary.loc[v, "success_rate"]) for v in names]
    lows = [r - float(summary.loc[v, "ci_low"]) for v, r in zip(names, rates, strict=True)]
    highs = [float(summary.loc[v, "ci_high"]) - r for v, r in zip(names, rates, strict=True)]
    left.barh(names, rates, xerr=[lows, highs], color="#60a5fa", capsize=4)
    left.set_xlim(0, 1)
    left.invert_yaxis()
    left.set_xlabel("success rate (95% interval)")
    cells = grid(ev)
    values = [
        [
            (lambda c: c[0] / sum(c) if sum(c) else float("nan"))(cells.get((t, v), (0, 0, 0)))
            for v in ev.variants
        ]
        for t in tasks
    ]
    image = right.imshow(values, aspect="auto", cmap="RdYlGn", vmin=0, vmax=1)
    right.set_xticks(range(len(ev.variants)), ev.variants, rotation=30, ha="right")
    right.set_yticks(range(len(tasks)), tasks, fontsize=7)
    fig.colorbar(image, ax=right, label="passing repeats")
    fig.suptitle(f"{len(ev.records)} runs; errors={ev.errors}")
    fig.tight_layout()
    plt.close(fig)  # the notebook shows the returned figure once, not pyplot's copy too
    return fig
