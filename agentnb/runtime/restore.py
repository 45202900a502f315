"""restore: take the session, load its history, append the user input (000 §2.1, 001 §3.1).

The run waits for (or is refused) the session's lock, refuses an invalid conversation before
touching it, and appends the input (already validated when the run was created).
"""

from __future__ import annotations

from ..events import ContextRestored, RunStarted
from .state import RunState


async def restore(state: RunState) -> None:
    session = state.session
    run = state.run_ref()
    assert run is not None, "a run's state is driven by its Run"
    await session.lock.acquire(state.id, session.id, state.lock_policy, run)
    if not session.is_valid:  # refuse before touching it: InvalidConversation, in words
        session.lock.release(state.id)
        session.check()
    model = state.agent.model
    text = state.input.text if state.input is not None else None
    state.emit(
        RunStarted,
        input=text,
        agent=state.agent.name,
        model=getattr(model, "name", type(model).__name__),
        provider=getattr(model, "provider", None),
    )
    history = len(session)
    state.record.start = history
    session.runs.append(state.record)
    if state.input is not None:
        state.append(state.input)
    state.emit(ContextRestored, history=history, appended=int(state.input is not None))
