"""The Pareto front over training tasks, and how a parent is chosen from it (GEPA's rule).

For each training task, the candidates of the pool with the best score on it; a candidate
that is best on no task, or that another candidate matches or beats on every task where it
is best, is off the front. A parent is drawn from the front with a chance proportional to
the number of tasks it is best on, so a candidate that alone solves one odd task keeps a
chance to be improved, where "always the best average" would lose what it knew (GEPA,
arXiv 2507.19457, §3). The draw uses the optimisation's seeded generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .candidate import Candidate

__all__ = ["front", "select_parent"]


def front(pool: Sequence[Candidate], tasks: Sequence[str]) -> dict[str, int]:
    """The candidates on the front -> how many training tasks each is best on (ids in pool
    order)."""
    scored = [c for c in pool if all(t in c.scores for t in tasks)]
    if not scored:
        return {}
    best_on: dict[str, set[str]] = {c.id: set() for c in scored}
    for t in tasks:
        top = max(c.scores[t] for c in scored)
        for c in scored:
            if c.scores[t] == top:
                best_on[c.id].add(t)
    by_id = {c.id: c for c in scored}
    order = {c.id: n for n, c in enumerate(scored)}
    alive = [i for i, won in best_on.items() if won]
    kept = []
    for i in alive:
        mine = best_on[i]
        dominated = any(
            j != i
            and mine <= best_on[j]
            and all(by_id[j].scores[t] >= by_id[i].scores[t] for t in tasks)
            and (
                mine < best_on[j] or order[j] < order[i]
            )  # of two equal candidates the older one stays
            for j in alive
        )
        if not dominated:
            kept.append(i)
    return {i: len(best_on[i]) for i in kept}


def select_parent(pool: Sequence[Candidate], tasks: Sequence[str], rng: random.Random) -> str:
    """One candidate of the front, drawn with weight = the tasks it is best on."""
    weights = front(pool, tasks)
    if not weights:
        raise ValueError("no candidate has been scored on every training task")
    ids = list(weights)
    return rng.choices(ids, weights=[weights[i] for i in ids])[0]
