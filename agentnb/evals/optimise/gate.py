"""The promotion gate: a candidate replaces the incumbent only when the held-out tasks say so.

The candidate and the incumbent ran the same validation tasks with the same seeds, so they
pair by (task, repeat) exactly as in ``ev.compare`` (:mod:`agentnb.evals.comparison`). The
gate promotes when the comparison finds the candidate **better** at the level ``alpha``:

* ``"tasks"`` (default): the exact test over tasks (each task's repeats as its pass rate,
  :mod:`agentnb.evals.verdict`) gives p < alpha, with more tasks improved than regressed.
  A task counts once however often it ran: repeats of a deterministic model are not new
  evidence, so ``repeats=3`` promotes what ``repeats=1`` promotes;
* ``"pairs"``: the exact McNemar test over (task, repeat) pairs gives p < alpha, with more
  wins than losses. It assumes the repeats of a task independent (a model sampled at a
  temperature); ``"mcnemar"``, its former name, is read as ``"pairs"``;
* ``"bootstrap"``: the paired bootstrap's (1 − alpha) interval of the difference in success
  rate lies above 0 (over tasks when they repeat).

Each gate is one test at ``alpha``. An optimisation that gates k candidates on the same
validation tasks promotes a candidate that is no better with a chance of at most k · alpha
(the Bonferroni bound); the result reports k and that bound, and ``alpha`` can be lowered
for a stricter family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from ..comparison import Comparison
from ..evaluation import Evaluation

if TYPE_CHECKING:
    from .optimisation import Optimisation

__all__ = ["GATES", "check", "compare", "decide"]

GATES = ("tasks", "pairs", "bootstrap")
#: Former names of the gates, read as the gate they name now.
RENAMED = {"mcnemar": "pairs"}


def check(method: str, alpha: float) -> str:
    """The gate ``method`` names (a former name read as today's), or a ConfigurationError."""
    method = RENAMED.get(method, method)
    if method not in GATES:
        raise ConfigurationError(f"gate must be one of {GATES}, not {method!r}")
    if not 0 < alpha < 1:
        raise ConfigurationError(f"alpha must be between 0 and 1, not {alpha!r}")
    return method


def compare(opt: Optimisation, incumbent: str, candidate: str) -> Comparison:
    """The comparison the gate reads: the two candidates' runs on the validation tasks only,
    paired by (task, repeat), at the optimisation's ``alpha``, read by its gate's test."""
    names = set(opt.validation.names)
    part = Evaluation.from_records(
        [
            r
            for r in opt.evaluation.records
            if r.variant in (incumbent, candidate) and r.task in names
        ],
        tasks=opt.validation,
        seed=opt.seed,
    )
    part.descriptions = {v: opt.evaluation.descriptions[v] for v in (incumbent, candidate)}
    found = part.compare(incumbent, candidate, alpha=opt.alpha, noise=opt.noise)
    return found.using("pairs") if RENAMED.get(opt.gate, opt.gate) == "pairs" else found


def decide(comparison: Comparison, method: str) -> dict[str, Any]:
    """The gate's decision on a comparison of the incumbent (baseline) and the candidate."""
    method = RENAMED.get(method, method)
    c = comparison.using(method) if method in ("tasks", "pairs") else comparison
    if method == "tasks":
        promoted = c.significant and c.won > c.lost
        rule = (
            f"p < {c.alpha:g} by the exact test over tasks, with more tasks improved than regressed"
        )
    elif method == "pairs":
        promoted = c.significant and c.won > c.lost
        rule = (
            f"p < {c.alpha:g} by exact McNemar over pairs (repeats assumed independent), with "
            "more wins than losses"
        )
    else:
        promoted = c.pairs > 0 and c.ci_low > 0
        rule = f"the paired bootstrap's {1 - c.alpha:.0%} interval above 0"
    if c.underpowered:  # within the incumbent's noise floor (optimize(noise=...))
        promoted = False
        rule += ", outside the incumbent's noise floor"
    return {
        "promoted": bool(promoted),
        "method": method,
        "rule": rule,
        "test": c.method,
        "alpha": c.alpha,
        "tasks": c.tasks,
        "pairs": c.pairs,
        "wins": c.won if method != "bootstrap" else c.wins,
        "losses": c.lost if method != "bootstrap" else c.losses,
        "p": c.p,
        "ci": [c.ci_low, c.ci_high],
        "difference": c.difference,
        "repeats_identical": c.repeats_identical,
        "verdict": c.verdict,
        "against": c.baseline,
    }
