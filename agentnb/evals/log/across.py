"""Comparing across the log: a variant of one experiment against a variant of another.

    an.evals.compare("e-1a2b", "e-9f3c")                       # each experiment's one variant
    an.evals.compare("e-1a2b", "e-9f3c", baseline="article", other="terse")
    both = an.evals.joined("e-1a2b", "e-9f3c", baseline="article", other="terse")

The two variants pair **by task** (and repeat), on the tasks the two experiments share: the
same name and the same task (its digest: input, history, checks). The comparison is then the
one ``ev.compare`` makes (the exact test over tasks, the paired interval, the prompt diff), as
if both had run in one evaluation; pairs share a seed only when both experiments used the
same ``seed``. Experiments that share no task are refused, and so are tasks that share a name
but not their content (named, with why).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from ...session import Session
from ..record import EvalRecord
from ..tasks import TaskSet
from .identity import keepable_tasks
from .reading import experiment

if TYPE_CHECKING:
    from ..comparison import Comparison
    from ..evaluation import Evaluation

__all__ = ["compare", "joined"]


def _evaluation(value: Any, log: Any) -> tuple[Evaluation, str]:
    from ..evaluation import Evaluation

    if isinstance(value, str):
        value = experiment(value, log)
    ev = getattr(value, "evaluation", value)  # an optimisation: its runs
    if not isinstance(ev, Evaluation):
        raise ConfigurationError(f"not an experiment: {value!r:.80} (an id, or an Evaluation)")
    entry = ev.experiment
    return ev, entry.id if entry is not None else f"ev{id(ev) % 10_000}"


def _variant(ev: Evaluation, name: str | None, which: str, eid: str) -> str:
    if name is None:
        if len(ev.variants) != 1:
            raise ConfigurationError(
                f"experiment {eid} has variants {ev.variants}: say which with {which}=..."
            )
        return ev.variants[0]
    if name not in ev.variants:
        raise ConfigurationError(f"experiment {eid} has no variant {name!r}: {ev.variants}")
    return name


def joined(
    first: Any,
    second: Any,
    *,
    baseline: str | None = None,
    other: str | None = None,
    log: Any = None,
) -> Evaluation:
    """One evaluation holding ``baseline`` of ``first`` and ``other`` of ``second`` on the
    tasks they share (named ``"<id>:<variant>"`` when the two names are the same)."""
    from ..evaluation import Evaluation

    a, aid = _evaluation(first, log)
    b, bid = _evaluation(second, log)
    va, vb = _variant(a, baseline, "baseline", aid), _variant(b, other, "other", bid)
    _, _, da = keepable_tasks(a.tasks)
    _, _, db = keepable_tasks(b.tasks)
    same = [n for n in a.tasks.names if n in db and da[n] == db[n]]
    differ = [n for n in a.tasks.names if n in db and da[n] != db[n]]
    if not same:
        why = (
            f"; tasks {differ} have the same names but differ (input, history or checks)"
            if differ
            else ""
        )
        raise ConfigurationError(
            f"experiments {aid} and {bid} share no task, so their runs cannot be paired{why}"
        )
    na, nb = (va, vb) if va != vb else (f"{aid}:{va}", f"{bid}:{vb}")
    repeats = min(a.repeats, b.repeats)
    both = Evaluation(
        [na, nb], TaskSet([a.tasks[n] for n in same], name=a.tasks.name), repeats,
        seed=a.seed, errors=a.errors,
    )  # fmt: skip
    both.descriptions = {na: a.descriptions.get(va, {}), nb: b.descriptions.get(vb, {})}
    both.flags = {**a.flags, **b.flags}
    keep = set(same)
    for ev, old, new in ((a, va, na), (b, vb, nb)):
        for r in ev.records:
            if r.variant == old and r.task in keep and r.repeat < repeats:
                row, session = _renamed(r, ev.kept(r).session, new)
                both.add(row, session)
    both.differing = differ  # type: ignore[attr-defined]
    both.finish()
    return both


def _renamed(row: EvalRecord, session: Session | None, name: str) -> tuple[EvalRecord, Any]:
    """``row`` as the variant ``name``: itself when it has that name, else copies of its
    runs' records (tags renamed) on a copy of its session."""
    if row.variant == name:
        return row, session
    runs = [dataclasses.replace(r, tags={**r.tags, "variant": name}) for r in row.runs]
    if runs[-1].annotations is not None:
        runs[-1].annotations = dict(runs[-1].annotations)
    copy = None
    if session is not None:
        copy = Session(session.wire())
        copy.runs.extend(r for r in runs if r.start is not None)
    return EvalRecord.of(runs[-1], copy), copy


def compare(
    first: Any,
    second: Any,
    *,
    baseline: str | None = None,
    other: str | None = None,
    margin: float | None = None,
    alpha: float = 0.05,
    test: str = "tasks",
    noise: Any = None,
    log: Any = None,
) -> Comparison:
    """The paired comparison of ``baseline`` in experiment ``first`` with ``other`` in
    ``second`` (ids in the log, or evaluations), on the tasks they share: see
    :func:`joined` and ``ev.compare`` (``noise``: the baseline's floor)."""
    both = joined(first, second, baseline=baseline, other=other, log=log)
    a, b = both.variants
    found = both.compare(a, b, margin=margin, alpha=alpha, noise=noise)
    return found.using(test)
