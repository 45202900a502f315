"""The promotion gate: a candidate replaces the incumbent only when the held-out tasks say so.

The candidate and the incumbent ran the same validation tasks with the same seeds, so they
pair by (task, repeat) exactly as in ``ev.compare`` (:mod:`agentnb.evals.comparison`). The
gate promotes when the comparison finds the candidate **better** at the level ``alpha``:

* ``"mcnemar"`` (default): the exact two-sided McNemar test on the discordant pairs gives
  p < alpha, with more wins than losses;
* ``"bootstrap"``: the paired bootstrap's (1 − alpha) interval of the difference in success
  rate lies above 0.

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

__all__ = ["GATES", "compare", "decide"]

GATES = ("mcnemar", "bootstrap")


def check(method: str, alpha: float) -> None:
    if method not in GATES:
        raise ConfigurationError(f"gate must be one of {GATES}, not {method!r}")
    if not 0 < alpha < 1:
        raise ConfigurationError(f"alpha must be between 0 and 1, not {alpha!r}")


def compare(opt: Optimisation, incumbent: str, candidate: str) -> Comparison:
    """The comparison the gate reads: the two candidates' runs on the validation tasks only,
    paired by (task, repeat), at the optimisation's ``alpha``."""
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
    return part.compare(incumbent, candidate, alpha=opt.alpha)


def decide(comparison: Comparison, method: str) -> dict[str, Any]:
    """The gate's decision on a comparison of the incumbent (baseline) and the candidate."""
    c = comparison
    if method == "mcnemar":
        promoted = c.significant and c.wins > c.losses
        rule = f"exact McNemar p < {c.alpha:g} with more wins than losses"
    else:
        promoted = c.pairs > 0 and c.ci_low > 0
        rule = f"the paired bootstrap's {1 - c.alpha:.0%} interval above 0"
    return {
        "promoted": bool(promoted),
        "method": method,
        "rule": rule,
        "alpha": c.alpha,
        "pairs": c.pairs,
        "wins": c.wins,
        "losses": c.losses,
        "p": c.mcnemar_p,
        "ci": [c.ci_low, c.ci_high],
        "difference": c.difference,
        "verdict": c.verdict,
        "against": c.baseline,
    }
