"""Agreement between raters of the same runs: does the judge agree with the people?

    a = ev.agreement("judge", "human")          # Cohen's kappa, its interval, the table
    a.kappa; a.interval; a.table; a.disagreements; a.verdict
    ev.agreement("judge", "human", threshold=0.6)   # below it, the judge is flagged
    ev.agreement("alice", "bob", "judge")       # three raters or more: Krippendorff's alpha

A rater is named as the tables name it: a labeller (``"human"``, or any rater given to
``ev.label``), a check by its name (``"judge('Is the answer polite?')"``), by its kind when
one check of the evaluation has it (``"judge"``), or by a unique beginning of its name, or
``"outcome"`` (the run's pass/fail). A run counts for a rater when the rater gave it a
verdict: a check that raised or timed out gave none, nor did an ``error`` outcome.

Two raters: **Cohen's kappa** over the runs both rated, (p_o − p_e) / (1 − p_e), with its
asymptotic standard error (Fleiss, Cohen and Everitt 1969) and the normal interval, the 2×2
confusion table and the runs they disagree on. Three or more: **Krippendorff's alpha**
(nominal) over every run at least two rated, from the ``krippendorff`` package (not written
here), with a bootstrap interval over runs. With ``threshold``, a check rater whose
agreement falls below it is **flagged** on the evaluation (``ev.flags``): wherever its
verdicts are shown (the runs table, the output grid, the matrix's run detail, the summary's
caption) they carry the flag and why.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from .labels import labels
from .tables import FLAG

if TYPE_CHECKING:
    import pandas as pd

    from .evaluation import Evaluation
    from .record import EvalRecord

__all__ = ["Agreement", "agreement", "cohen_kappa", "rater_names"]


def cohen_kappa(table: list[list[int]], confidence: float = 0.95) -> tuple[float, float, float]:
    """Cohen's kappa of a square confusion table (rows: rater a, columns: rater b) and its
    ``confidence`` interval from the asymptotic standard error (Fleiss, Cohen and Everitt's);
    NaN when it is undefined (no runs, or both raters always said the same one thing)."""
    k = len(table)
    n = sum(sum(row) for row in table)
    if not n:
        return math.nan, math.nan, math.nan
    p = [[c / n for c in row] for row in table]
    rows = [sum(r) for r in p]
    cols = [sum(p[i][j] for i in range(k)) for j in range(k)]
    po = sum(p[i][i] for i in range(k))
    pe = sum(rows[i] * cols[i] for i in range(k))
    if pe >= 1:
        return math.nan, math.nan, math.nan
    kappa = (po - pe) / (1 - pe)
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(k))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(k) for j in range(k) if i != j
    )
    c = (kappa - pe * (1 - kappa)) ** 2
    se = math.sqrt(max(0.0, (a + b - c) / (1 - pe) ** 2 / n))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return kappa, kappa - z * se, kappa + z * se


def _checks_of(ev: Evaluation) -> list[str]:
    names: dict[str, None] = {}
    for t in ev.tasks:
        for c in t.checks:
            names[c.name] = None
    for r in ev.records:
        for result in r.checks:
            names[result.name] = None
    return list(names)


def rater_names(ev: Evaluation) -> dict[str, list[str]]:
    """Who rated the runs of ``ev``: ``{"labels": [...], "checks": [...]}``."""
    raters: dict[str, None] = {}
    for r in ev.records:
        for name in labels(r.run):
            raters[name] = None
    return {"labels": list(raters), "checks": _checks_of(ev)}


def resolve(ev: Evaluation, name: str) -> tuple[str, str]:
    """``(kind, name)`` of a rater: ``("label", rater)``, ``("check", check name)`` or
    ``("outcome", "outcome")``; refused, naming who there is, when none or several match."""
    known = rater_names(ev)
    if name == "outcome":
        return "outcome", name
    if name in known["labels"]:
        return "label", name
    checks = known["checks"]
    if name in checks:
        return "check", name
    kinds = [c for c in checks if c.split("(", 1)[0] == name]
    starts = [c for c in checks if c.startswith(name)]
    for found in (kinds, starts):
        if len(found) == 1:
            return "check", found[0]
        if len(found) > 1:
            raise ConfigurationError(f"rater {name!r} is ambiguous: it names {found}")
    if name == "human":  # the default labeller, before anyone labelled
        raise ConfigurationError(
            "nobody has labelled a run of this evaluation yet: label runs in the output grid "
            "(ev.outputs()) or with ev.label(variant, task, repeat, 'pass' | 'fail', note)"
        )
    raise ConfigurationError(
        f"no rater {name!r}: labellers {known['labels']}, checks {checks}, or 'outcome'"
    )


def verdict(row: EvalRecord, rater: tuple[str, str]) -> bool | None:
    """What ``rater`` said of ``row``'s run: True (pass), False (fail), None (nothing)."""
    kind, name = rater
    if kind == "outcome":
        return None if row.outcome == "error" else row.passed
    if kind == "label":
        found = labels(row.run).get(name)
        return None if found is None else found.passed
    if row.error.startswith(f"check {name} "):  # it raised or timed out: no verdict
        return None
    for c in row.checks:
        if c.name == name:
            return c.passed
    return None


@dataclass
class Agreement:
    """What :func:`agreement` found (see the module docstring)."""

    raters: list[str]
    #: ``"cohen_kappa"`` (two raters) or ``"krippendorff_alpha"`` (more).
    statistic: str
    value: float
    interval: tuple[float, float]
    #: Runs counted (rated by both, or by at least two raters).
    n: int
    confidence: float = 0.95
    #: Two raters: the 2×2 table, rows the first rater's pass/fail, columns the second's.
    matrix: list[list[int]] = field(default_factory=list)
    #: The runs the raters disagree on: (variant, task, repeat, {rater: verdict}, notes).
    disagreeing: list[dict[str, Any]] = field(default_factory=list)
    threshold: float | None = None
    #: The checks flagged by this reading (their agreement below ``threshold``).
    flagged: list[str] = field(default_factory=list)

    @property
    def kappa(self) -> float:
        """Cohen's kappa (two raters), else NaN."""
        return self.value if self.statistic == "cohen_kappa" else math.nan

    @property
    def alpha(self) -> float:
        """Krippendorff's alpha (three raters or more), else NaN."""
        return self.value if self.statistic == "krippendorff_alpha" else math.nan

    @property
    def table(self) -> pd.DataFrame:
        """The confusion table of two raters (a DataFrame, pass/fail by pass/fail)."""
        import pandas as pd

        a, b = self.raters[:2]
        frame = pd.DataFrame(
            self.matrix or [[0, 0], [0, 0]],
            index=pd.Index(["pass", "fail"], name=a),
            columns=pd.Index(["pass", "fail"], name=b),
        )
        return frame

    @property
    def disagreements(self) -> pd.DataFrame:
        """One row per run the raters disagree on, with each rater's verdict and reason."""
        import pandas as pd

        return pd.DataFrame(self.disagreeing)

    @property
    def verdict(self) -> str:
        symbol = "κ" if self.statistic == "cohen_kappa" else "α"
        who = " and ".join(self.raters)
        if math.isnan(self.value):
            return (
                f"{who}: agreement undefined over {self.n} runs (no runs both rated, or every "
                "verdict the same: rate runs that differ)"
            )
        low, high = self.interval
        line = (
            f"{who} agree at {symbol} = {self.value:.2f} ({self.confidence:.0%} CI {low:.2f} to "
            f"{high:.2f}) over {self.n} runs; they disagree on {len(self.disagreeing)}"
        )
        if self.threshold is not None:
            if self.flagged:
                line += f"; below {self.threshold:g}: {', '.join(self.flagged)} flagged {FLAG}"
            else:
                line += f"; at or above {self.threshold:g}"
        return line

    def __repr__(self) -> str:
        return f"<Agreement {self.verdict}>"


def agreement(
    ev: Evaluation,
    *raters: str,
    threshold: float | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """``ev.agreement(a, b, ...)``: see the module docstring."""
    if len(raters) < 2 or len(set(raters)) < len(raters):
        raise ConfigurationError(f"agreement needs two different raters or more, not {raters}")
    if threshold is not None and not -1 <= threshold <= 1:
        raise ConfigurationError(f"threshold is an agreement between -1 and 1, not {threshold!r}")
    who = [resolve(ev, r) for r in raters]
    names = [name for _, name in who]
    table = [(row, [verdict(row, w) for w in who]) for row in ev.records]
    if len(who) == 2:
        both = [(row, v) for row, v in table if None not in v]
        matrix = [[0, 0], [0, 0]]
        for _, (a, b) in both:
            matrix[0 if a else 1][0 if b else 1] += 1
        value, low, high = cohen_kappa(matrix, confidence)
        found = Agreement(names, "cohen_kappa", value, (low, high), len(both), confidence, matrix)
    else:
        rated = [(row, v) for row, v in table if sum(x is not None for x in v) >= 2]
        value, low, high = _alpha([v for _, v in rated], confidence, seed)
        found = Agreement(names, "krippendorff_alpha", value, (low, high), len(rated), confidence)
        both = rated
    found.disagreeing = [
        _row(row, who, v) for row, v in both if len({x for x in v if x is not None}) > 1
    ]
    if threshold is not None:
        found.threshold = threshold
        judges = [name for kind, name in who if kind == "check"]
        below = not math.isnan(value) and value < threshold
        symbol = "κ" if len(who) == 2 else "α"
        for name in judges:
            others = ", ".join(n for n in names if n != name)
            if below:
                ev.flags[name] = (
                    f"agrees with {others} at {symbol} = {value:.2f} < {threshold:g} "
                    f"({found.n} runs)"
                )
                found.flagged.append(name)
            else:
                ev.flags.pop(name, None)
        if ev.experiment is not None:  # in the experiment log: the flags are written there
            ev.experiment.flag(ev.flags)
    return found


def _row(row: EvalRecord, who: list[tuple[str, str]], said: list[bool | None]) -> dict[str, Any]:
    out: dict[str, Any] = {"variant": row.variant, "task": row.task, "repeat": row.repeat}
    for (kind, name), v in zip(who, said, strict=True):
        out[name] = None if v is None else ("pass" if v else "fail")
        if kind == "label":
            found = labels(row.run).get(name)
            out[f"{name}: note"] = found.note if found else ""
        elif kind == "check":
            out[f"{name}: reason"] = next((c.reason for c in row.checks if c.name == name), "")
    out["output"] = row.output
    return out


def _alpha(units: list[list[bool | None]], confidence: float, seed: int) -> tuple[float, ...]:
    """Krippendorff's alpha (nominal) of raters × units, with a bootstrap interval over
    units (1000 resamples, seeded)."""
    import krippendorff
    import numpy as np

    def alpha(chosen: list[list[bool | None]]) -> float:
        data = np.array(
            [[np.nan if v is None else float(v) for v in unit] for unit in chosen], dtype=float
        ).T
        if len({v for unit in chosen for v in unit if v is not None}) < 2:
            return math.nan
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))

    value = alpha(units) if units else math.nan
    if math.isnan(value):
        return value, math.nan, math.nan
    rng = random.Random(seed)
    draws = sorted(
        a
        for a in (alpha([rng.choice(units) for _ in units]) for _ in range(1000))
        if not math.isnan(a)
    )
    if not draws:
        return value, math.nan, math.nan
    tail = (1 - confidence) / 2
    return value, draws[int(tail * (len(draws) - 1))], draws[int((1 - tail) * (len(draws) - 1))]
