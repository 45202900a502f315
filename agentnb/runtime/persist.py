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
    record = state.close_record()
    record.end = len(session)
    try:
        session.commit()
        if session.memory is not None and state.restored:
            new_messages = session.transcript.messages[state.start_index :]
            session.memory.observe(new_messages, session.id)
    except Exception as exc:  # the run still ends cleanly; the error is raised once it has
        if not isinstance(exc, AgentnbError):
            error = StoreError(f"the {session.store.name} store could not save the run: {exc}")
            error.__cause__ = exc
            exc = error
        state.error = state.error or exc
        record.detail += f" (not saved: {exc})"
    state.emit(Persisted, new_messages=new, store=session.store.name, version=session.version)
    announce_stop(state)


def announce_stop(state: RunState) -> None:
    """``RunStopped``: the last event of every run, a copy of its record."""
    record = state.record
    state.emit(
        RunStopped,
        reason=record.stop_reason or "error",
        detail=record.detail,
        output=record.output,
        iterations=record.iterations,
        usage=record.usage,
        stopped_in=record.stage or "persist",
    )
