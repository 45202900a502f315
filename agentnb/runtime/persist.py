"""persist: commit the run's messages to the session's store and close the run (000 §3.3).

Messages entered ``session.messages`` as they happened, so a live view could show them;
persisting writes what changed to the session's store in one commit, records why the run
stopped, and emits the last event of every run, ``RunStopped``. A store that refuses the
commit (another writer got there first) does not stop the run from ending cleanly: the error
is kept and raised once the run is closed.
"""

from __future__ import annotations

from ..errors import AgentnbError, StoreError
from ..events import Persisted, RunStopped
from .state import RunState


def persist(state: RunState) -> None:
    session = state.session
    state.stage = "persist"
    new = len(session) - state.start_index
    record = state.record
    if record is not None:
        record.end = len(session)
        record.stop_reason = state.stop_reason
        record.detail = state.stop_detail
        record.usage = state.usage
    try:
        session.commit()
        if session.memory is not None and state.record is not None:
            new_messages = session.transcript.messages[state.start_index :]
            session.memory.observe(new_messages, session.id)
    except Exception as exc:  # the run still ends cleanly; the error is raised once it has
        if not isinstance(exc, AgentnbError):
            error = StoreError(f"the {session.store.name} store could not save the run: {exc}")
            error.__cause__ = exc
            exc = error
        state.error = state.error or exc
        state.stop_detail += f" (not saved: {exc})"
    state.emit(Persisted, new_messages=new, store=session.store.name, version=session.version)
    state.emit(
        RunStopped,
        reason=state.stop_reason or "error",
        detail=state.stop_detail,
        output=state.output,
        iterations=state.iteration,
        usage=state.usage,
        stopped_in=state.stop_stage or "persist",
    )
