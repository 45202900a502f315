"""persist: commit the run's messages to the session and close the run (000 §3.3).

Messages entered ``session.messages`` as they happened, so a live view could show them;
persisting marks them committed (a store, when a session has one, writes them here in one
transaction), records why the run stopped, releases the session lock, and emits the last
event of every run, ``RunStopped``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import Persisted, RunStopped

if TYPE_CHECKING:
    from .run import Run


def persist(run: Run) -> None:
    session = run.session
    new = len(session) - run.start_index
    session.committed = len(session)
    record = run.record
    if record is not None:
        record.end = len(session)
        record.stop_reason = run.stop_reason
        record.detail = run.stop_detail
        record.usage = run.usage
    run.stage = "persist"
    run.emit(Persisted, new_messages=new, store=None)
    run.emit(
        RunStopped,
        reason=run.stop_reason or "error",
        detail=run.stop_detail,
        output=run.output,
        iterations=run.iteration,
        usage=run.usage,
        stopped_in=run.stop_stage or "persist",
    )
