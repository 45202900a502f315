"""restore: take the session, load its history, append the user input (000 §2.1, 001 §3.1).

The run waits for (or is refused) the session's lock, refuses an invalid conversation before
touching it, and appends the input (already validated when the run was created).

A run started without input on a session that ends in open tool calls - a round that a crash,
a stop or a waiting approval cut short - *resumes* it: restore returns those calls and the
loop goes to ``execute_tools`` first. Calls the run was told may already have started
(``interrupted``) and that change the world are answered ``uncertain`` there, never run again
on their own (invariant 8; see ``guard``).
"""

from __future__ import annotations

from ..events import ContextRestored, RunStarted
from .decide import Decision
from .state import RunState


async def restore(state: RunState) -> Decision | None:
    """Take the session; returns the open calls to finish first when the run resumes."""
    session = state.session
    run = state.run_ref()
    assert run is not None, "a run's state is driven by its Run"
    await session.lock.acquire(state.id, session.id, state.lock_policy, run)
    resume = None
    if not session.is_valid:  # refuse before touching it: InvalidConversation, in words
        only_open = all(p.kind == "open" for p in session.problems)
        if state.input is not None or not only_open:
            session.lock.release(state.id)
            session.check()
        resume = Decision("tool_calls", tuple(session.transcript.open_calls()))
    model = state.agent.model
    text = state.input.text if state.input is not None else None
    state.record.model = name = getattr(model, "name", type(model).__name__)
    state.emit(
        RunStarted,
        input=text,
        agent=state.agent.name,
        model=name,
        provider=getattr(model, "provider", None),
    )
    history = len(session)
    state.record.start = history
    session.runs.append(state.record)
    if state.input is not None:
        state.append(state.input)
    state.emit(ContextRestored, history=history, appended=int(state.input is not None))
    return resume
