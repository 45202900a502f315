"""restore: take the session, load its history, append the user input (000 §2.1, 001 §3.1).

The run waits for (or is refused) the session's lock, refuses an invalid conversation before
touching it, and appends the input (already validated when the run was created).

A run started without input on a session that ends in open tool calls - a round that a crash,
a stop or a waiting approval cut short - *resumes* it: restore returns those calls and the
loop goes to ``execute_tools`` first. Calls the run was told may already have started
(``interrupted``) and that change the world are answered ``uncertain`` there, never run again
on their own (invariant 8).
"""

from __future__ import annotations

from ..events import ContextRestored, RunStarted, ToolFinished
from ..tools.results import UNCERTAIN, UNCERTAIN_HINT, error_content
from .decide import Decision
from .state import Outcome, RunState, ToolRound


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
    state.emit(
        RunStarted,
        input=text,
        agent=state.agent.name,
        model=getattr(model, "name", type(model).__name__),
    )
    history = len(session)
    state.record.start = history
    session.runs.append(state.record)
    if state.input is not None:
        state.append(state.input)
    state.emit(ContextRestored, history=history, appended=int(state.input is not None))
    if resume is not None and state.interrupted:
        _uncertain(state, resume)
    return resume


def _uncertain(state: RunState, resume: Decision) -> None:
    """Settle ``uncertain`` the side-effecting calls that may have run before a crash
    (``execute_tools`` answers them in call order with the others, and runs only those)."""
    at = state.session.transcript.open_at
    settled = state.round = ToolRound(at if at is not None else -1)
    tools = state.agent.tools
    for call in resume.calls:
        name = call.function.name
        if call.id in state.interrupted and tools.has_side_effects(name):
            content = error_content(UNCERTAIN, UNCERTAIN_HINT, kind="uncertain", call=call.id)
            settled.outcomes[call.id] = Outcome(content, False, "uncertain")
            state.emit(
                ToolFinished,
                call_id=call.id,
                name=name,
                ok=False,
                content=content,
                latency=0.0,
                kind="uncertain",
            )
