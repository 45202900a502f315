"""``opt.plot()``: the incumbent's validation success over the budget, candidates as points."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .optimisation import Optimisation


def plot(opt: Optimisation, *, ax: Any = None) -> Any:
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 3.5))
    else:
        fig = ax.figure
    seed = opt.candidates[0] if opt.candidates else None
    xs, ys = [], []
    if seed is not None and seed.validation is not None:
        xs, ys = [seed.decided_at], [seed.validation]
    for c in opt.candidates:
        if c.status == "promoted" and c.validation is not None:
            xs.append(c.decided_at)
            ys.append(c.validation)
    if xs:
        xs.append(max(opt.metric_calls, xs[-1]))
        ys.append(ys[-1])
        ax.step(xs, ys, where="post", label="incumbent, validation success")
    marks = {"rejected": "x", "pool": "o", "held": "s", "promoted": "*", "seed": "D"}
    for status, marker in marks.items():
        chosen = [c for c in opt.candidates if c.status == status and c.successes]
        if chosen:
            ax.scatter(
                [c.decided_at for c in chosen],
                [c.train_success for c in chosen],
                marker=marker,
                label=f"{status} (training success)",
            )
    ax.set_xlim(0, opt.budget)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("metric calls")
    ax.set_ylabel("success rate")
    ax.set_title("optimisation: the gate's incumbent over the budget")
    ax.legend(fontsize="small", loc="lower right")
    return fig
