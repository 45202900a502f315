"""The noise floor: how often the baseline disagrees with itself, measured before a gate trusts
a difference.

    floor = await an.evals.noise(agent, tasks, repeats=5)    # an A/A run: the same agent, k seeds
    floor.verdict        # "agent disagrees with itself on 3 of 13 tasks over 5 repeats ..."
    floor.frame          # per task: passes of k, its A/A flip rate
    ev.compare("a", "b", noise=floor)       # "underpowered: ..." when the difference is within it
    an.evals.plan(0.10, noise=floor, tasks=13)

The agent runs every task ``repeats`` times, each repeat with its own seed (as an evaluation
seeds its repeats), so a model that samples shows its spread and a deterministic one shows
none. A task's **A/A flip rate** is the share of its pairs of repeats whose outcomes differ
(``2·p·(k−p) / (k·(k−1))`` for p passes of k): the chance two runs of the same agent disagree
on it. A task **disagrees with itself** when its repeats are not all the same.

**The gate's rule.** A comparison's difference is *within the floor* when the tasks that
changed outcome, net (|improved − regressed|), are no more than the compared tasks on which
the baseline disagrees with itself: the baseline alone could have made that difference. The
gates (``python -m agentnb eval --noise``, :func:`agentnb.testing.assert_no_regression`,
the optimiser's ``noise=``) then refuse a verdict: "underpowered: the baseline disagrees with
itself on 3 of 13 tasks ...". A deterministic model has a floor of 0: the gate proceeds as
without one. One public eval gate found 27% of its verdicts flip on byte-identical inputs in
an A/A test (dotnet/skills #952); this is that test, run first.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError

if TYPE_CHECKING:
    import pandas as pd

    from .comparison import Comparison
    from .evaluation import Evaluation

__all__ = ["NoiseFloor", "noise"]


@dataclass
class NoiseFloor:
    """What :func:`noise` measured: per task, the passes of ``repeats`` runs (see the module
    docstring)."""

    variant: str
    repeats: int
    #: task -> (passed, runs counted)
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    evaluation: Evaluation | None = None

    @classmethod
    def of(cls, ev: Evaluation, variant: str | None = None, tasks: Any = None) -> NoiseFloor:
        """The floor ``ev``'s repeats of ``variant`` show (its only variant by default), on
        ``tasks`` (names; all by default)."""
        from .tables import counted

        if variant is None:
            if len(ev.variants) != 1:
                raise ConfigurationError(f"say which variant's noise: one of {ev.variants}")
            variant = ev.variants[0]
        if ev.repeats < 2:
            raise ConfigurationError(
                "a noise floor needs at least 2 repeats of each task (an A/A comparison of the "
                f"agent with itself); this evaluation ran {ev.repeats}"
            )
        wanted = set(tasks) if tasks is not None else None
        runs: dict[str, list[bool]] = defaultdict(list)
        for r in ev.records:
            if r.variant == variant and counted(ev, r) and (wanted is None or r.task in wanted):
                runs[r.task].append(r.passed)
        counts = {t: (sum(v), len(v)) for t, v in runs.items()}
        return cls(variant, ev.repeats, counts, ev)

    def flip_rate_of(self, task: str) -> float:
        p, k = self.counts[task]
        return 2 * p * (k - p) / (k * (k - 1)) if k > 1 else math.nan

    @property
    def unstable(self) -> list[str]:
        """The tasks on which the agent disagrees with itself (its repeats not all alike)."""
        return [t for t, (p, k) in self.counts.items() if 0 < p < k]

    @property
    def tasks(self) -> int:
        return len(self.counts)

    @property
    def share(self) -> float:
        """The share of tasks on which it disagrees with itself."""
        return len(self.unstable) / self.tasks if self.tasks else math.nan

    @property
    def flip_rate(self) -> float:
        """The mean A/A flip rate over tasks: the chance two runs of a task disagree."""
        rates = [self.flip_rate_of(t) for t in self.counts]
        rates = [r for r in rates if not math.isnan(r)]
        return sum(rates) / len(rates) if rates else math.nan

    @property
    def frame(self) -> pd.DataFrame:
        import pandas as pd

        rows = [
            {
                "task": t,
                "passed": p,
                "runs": k,
                "flip_rate": self.flip_rate_of(t),
                "disagrees": 0 < p < k,
            }
            for t, (p, k) in self.counts.items()
        ]
        return pd.DataFrame(rows, columns=["task", "passed", "runs", "flip_rate", "disagrees"])

    @property
    def verdict(self) -> str:
        n = len(self.unstable)
        head = (
            f"{self.variant} disagrees with itself on {n} of {self.tasks} tasks over "
            f"{self.repeats} repeats (A/A flip rate {self.flip_rate:.0%})"
        )
        if not n:
            return head + ": no noise floor, a gate reads differences as they are"
        return head + f": {', '.join(self.unstable[:8])}{' …' if n > 8 else ''}"

    def within(self, comparison: Comparison) -> str:
        """Why ``comparison``'s difference is within the floor (the gate then refuses a
        verdict), or "" when it is not. The floor must cover the compared tasks."""
        compared = list(comparison.compared)
        missing = [t for t in compared if t not in self.counts]
        if missing:
            raise ConfigurationError(
                f"the noise floor was measured on other tasks: {missing[:8]} were not run "
                "in it; measure it on the tasks you compare"
            )
        unstable = [t for t in compared if t in set(self.unstable)]
        better, worse = len(comparison.improved), len(comparison.regressed)
        net = abs(better - worse)
        if not unstable or not (better or worse) or net > len(unstable):
            return ""
        return (
            f"the baseline disagrees with itself on {len(unstable)} of {len(compared)} tasks "
            f"(A/A over {self.repeats} repeats), and the difference is {net} "
            f"task{'s' * (net != 1)} ({better} better, {worse} worse): within it"
        )

    def __repr__(self) -> str:
        return f"<NoiseFloor {self.verdict}>"


async def noise(
    agent: Any,
    tasks: Any,
    repeats: int = 5,
    *,
    seed: int = 0,
    concurrency: int = 8,
    timeout: float | None = 300.0,
    cache: Any = None,
    errors: Any = "fail",
    progress: bool | None = None,
    log: Any = None,
    note: str = "",
) -> NoiseFloor:
    """Run ``agent`` (or ``{name: agent}``) ``repeats`` times on each task, each repeat with
    its own seed, and return its :class:`NoiseFloor` (see the module docstring). Recorded in
    the experiment log as a ``noise`` experiment (``log=False``: not)."""
    from .evaluate import evaluate
    from .log.recording import chosen, record

    if repeats < 2:
        raise ConfigurationError(f"a noise floor needs at least 2 repeats, not {repeats}")
    place = chosen(log)  # a place that cannot be used is refused before anything runs
    named = agent if isinstance(agent, dict) else {getattr(agent, "name", "") or "baseline": agent}
    if len(named) != 1:
        raise ConfigurationError(f"noise() measures one agent, not {list(named)}")
    ev = await evaluate(
        named, tasks, repeats, seed=seed, concurrency=concurrency, timeout=timeout, cache=cache,
        errors=errors, progress=progress, log=False,
    )  # fmt: skip
    if place is not None:
        record(ev, place, kind="noise", note=note)
    return NoiseFloor.of(ev)
