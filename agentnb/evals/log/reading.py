"""Reading the log: ``an.evals.experiments()`` (a DataFrame) and ``an.evals.experiment(id)``
(one experiment, whole: an Evaluation, or an Optimisation with its evaluation).

An experiment read back is made of its runs: each row's records read onto its session as the
store keeps it (:func:`agentnb.evals.read_row`), the tasks and their checks from the entry.
So it shows its matrix and grid, compares, rescores and takes labels, which go back to the
log. Checks kept by their source run only with ``trust=True`` (see
:mod:`agentnb.evals.checks.source`), a judge needs its model again (``judge=``), and the
runs' end states and traces are not kept (a rescore that needs them is refused, naming the
check).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...session import Session
from ..rows import read_row
from ..tasks import TaskSet
from .listing import COLUMNS, frame
from .recording import LogEntry, chosen
from .store import ExperimentLog

if TYPE_CHECKING:
    import pandas as pd

    from ..evaluation import Evaluation

__all__ = ["COLUMNS", "evaluation_of", "experiment", "experiments", "frame"]


def experiments(
    log: Any = None, *, kind: str | None = None, contains: str | None = None
) -> pd.DataFrame:
    """Every experiment in the log, oldest first (see :data:`COLUMNS`); ``kind``
    (``"evaluation"``, ``"optimisation"``, ``"rescore"``, ``"noise"``) and ``contains`` (text
    in the id, variants, note or commit) filter. An empty frame when there is no log yet."""
    place = chosen(log, reading=True)
    entries = place.entries() if place is not None else []
    found = frame(entries)
    if kind is not None:
        found = found[found["kind"] == kind]
    if contains:
        text = found[["id", "variants", "note", "commit"]].astype(str).agg(" ".join, axis=1)
        found = found[text.str.contains(contains, case=False, regex=False)]
    return found.reset_index(drop=True)


def experiment(
    experiment_id: str, log: Any = None, *, judge: Any = None, trust: bool = False
) -> Any:
    """The experiment ``experiment_id`` (or the one id it begins), read whole from the log:
    an :class:`~agentnb.Evaluation`, or for an optimisation its
    :class:`~agentnb.evals.Optimisation`. ``judge``: the model of its judge checks;
    ``trust``: run checks kept by their source."""
    place = chosen(log, reading=True)
    if place is None:
        raise KeyError(f"no experiment log here (looked for {log or 'the default place'})")
    entry = place.entry(experiment_id)
    ev = evaluation_of(place, entry, judge=judge, trust=trust)
    if entry["kind"] != "optimisation":
        return ev
    from ..optimise.files import restore
    from ..optimise.optimisation import Optimisation

    return restore(Optimisation, entry["body"]["optimisation"], ev)


def evaluation_of(
    log: ExperimentLog, entry: dict[str, Any], *, judge: Any = None, trust: bool = False
) -> Evaluation:
    """The evaluation of an experiment's entry, its rows read from their runs."""
    from ..evaluation import Evaluation

    body, eid = entry["body"], entry["id"]
    tasks = TaskSet.from_dicts(
        body["tasks"],
        name=body.get("tasks_name", "tasks"),
        judge=judge,
        trust=trust,
        where=f"experiment {eid}",
    )
    ev = Evaluation(
        body["variant_order"], tasks, body["repeats"], seed=body["seed"], errors=body["errors"]
    )
    ev.descriptions = {
        name: {k: v for k, v in d.items() if k != "digest"}
        for name, d in (body.get("variants") or {}).items()
    }
    sessions: dict[str, Session] = {}
    for sid, runs in log.rows(eid):
        session = None
        if sid is not None:
            session = sessions.get(sid) or sessions.setdefault(sid, log.session(sid))
        ev.add(read_row(runs, session), session)
    ev.flags = dict(body.get("flags") or {})
    ev.cancelled = bool(body.get("partial"))
    ev.finish()
    positions = {r.key: i for i, r in enumerate(ev.records)}
    ev.experiment = LogEntry(
        eid, log, entry["kind"], positions, entry["source"], entry["note"], body
    )
    return ev
