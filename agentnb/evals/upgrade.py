"""Rows of earlier formats, read into runs: what an evaluation file, an optimisation file or a
service's sweep table written before runs became the record still says, as run records.

Files written by agentnb before evaluations were views of ``session.runs``
(``agentnb.evaluation/1`` and ``/2``, ``agentnb.optimisation/1``) kept one copied record per
row: its outcome and checks, and figures the runner had measured. Each such row is read into
the record of its task's run, so every view shows what the file said, figure for figure:

* the run's ids are the trace's, when the file kept it (else new ones);
* the task's run starts at the last user turn of the saved messages (where the runner had put
  its input), when the row has a stop reason (a row without one never ran its task); its
  steps, tool calls, tool errors and divergence are read from those messages, as they were;
* its usage holds the row's ``prompt_tokens`` and ``completion_tokens`` (what every turn
  billed) with the row's ``tokens`` (the task run's total, cache hits included) as its
  total; ``latency``, ``model_calls``, ``cached_calls``, ``unmetered`` and the model are the
  row's; its checks' annotation holds the outcome, checks and error;
* ``annotations["converted"]`` names the format it came from.

Saving it again writes the current format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from .handmade import made_run
from .record import EvalRecord, row_tags

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["OLD_EVALUATIONS", "old_row"]

#: The evaluation formats read by :func:`old_row`.
OLD_EVALUATIONS = ("agentnb.evaluation/1", "agentnb.evaluation/2")


def _last_input(session: Session) -> int | None:
    found = None
    for i, message in enumerate(session.messages):
        if message.role == "user" and getattr(message, "name", None) != "agentnb":
            found = i
    return found


def old_row(
    data: Mapping[str, Any],
    session: Session | None,
    ids: Mapping[str, Any] | None = None,
    *,
    source: str = OLD_EVALUATIONS[-1],
) -> EvalRecord:
    """The row ``data`` (an earlier format's record) as the record of its task's run on
    ``session`` (put in ``session.runs``), ``ids`` the trace's (``run_id``, ``trace_id``)."""
    try:
        tags = row_tags(str(data["variant"]), str(data["task"]), int(data["repeat"]), 0)
        tags["seed"] = str(int(data.get("seed") or 0))
        ran = data.get("stop_reason") is not None and session is not None
        start = _last_input(session) if ran and session is not None else None
        place: dict[str, Any] = {"annotations": {"converted": source}}
        if start is not None and session is not None:
            place.update(start=start, end=len(session), input=session.messages[start].text)
        run = made_run(data, tags, ids=ids, **place)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"not a run record ({type(exc).__name__}: {exc})") from None
    if start is not None and session is not None:
        session.runs.append(run)
    return EvalRecord.of(run, session)
