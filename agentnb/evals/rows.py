"""From tagged runs to an evaluation's rows: the public way in for runs made elsewhere.

An evaluation's run is an ordinary run whose record is tagged with its row (``variant``,
``task``, ``repeat``, ``seed``: :func:`~agentnb.evals.record.row_tags`) and annotated with
its checks (:func:`~agentnb.evals.checked.annotate`). Whoever made the runs (this process's
sweep, a service's workers, a file written earlier) hands the sessions here:

    rows = an.evals.records_of(sessions)            # one EvalRecord per (variant, task, repeat)
    ev = an.Evaluation.from_sessions(sessions, tasks=tasks)

and a row stored as its runs' records (:meth:`~agentnb.session.RunRecord.to_dict`, the task's
run last: ``[r.to_dict() for r in row.runs]``) reads back with :func:`read_row`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..session import RunRecord
from .checked import KEY, annotate, checked
from .record import EvalRecord

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["read_row", "records_of"]


def records_of(sessions: Iterable[Session]) -> list[EvalRecord]:
    """The rows ``sessions`` hold: for each (variant, task, repeat) their runs are tagged
    with, the last such run that was checked (annotated), in the order the sessions and runs
    come. The public way from tagged runs (a service's tasks, a file) to an evaluation's
    rows; ``Evaluation.from_sessions`` builds the evaluation."""
    rows: dict[tuple[str, str, str], EvalRecord] = {}
    for session in sessions:
        for run in session.runs:
            tags = run.tags
            if checked(run) is None or "variant" not in tags:
                continue
            key = (tags["variant"], tags.get("task", ""), tags.get("repeat", ""))
            rows.pop(key, None)
            rows[key] = EvalRecord.of(run, session)
    return list(rows.values())


def read_row(runs: Iterable[Mapping[str, Any]], session: Session | None = None) -> EvalRecord:
    """The row whose runs' records these are (:meth:`RunRecord.to_dict`'s data, the task's
    run last: what :attr:`EvalRecord.runs` gives), read back onto ``session``: those that held
    it (``start`` set) go back in ``session.runs``."""
    records = [RunRecord.from_dict(data) for data in runs]
    if not records:
        raise ConfigurationError("a row with no run record")
    for record in records:
        found = (record.annotations or {}).get(KEY)
        if found is not None:
            annotate(record, found)  # the checks' annotation again, not its dict
        if session is not None and record.start is not None:
            session.runs.append(record)
    return EvalRecord.of(records[-1], session)
