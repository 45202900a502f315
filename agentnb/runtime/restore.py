"""restore: take the session's lock, load its history, append the user input (000 §2.1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import ContextRestored, RunStarted
from ..messages import UserMessage, parse_message
from ..session import RunRecord

if TYPE_CHECKING:
    from .run import Run


async def restore(run: Run) -> None:
    session = run.session
    await session.lock.acquire(run.id, session.id, run.lock_policy)
    run.locked = True
    if not session.is_valid:
        session.check()  # refuse before touching it: InvalidConversation, in words
    model = run.agent.model
    run.emit(
        RunStarted,
        input=run.input_text,
        agent=run.agent.name,
        model=getattr(model, "name", type(model).__name__),
    )
    history = len(session)
    run.start_index = history
    run.record = RunRecord(run.id, run.trace_id, run.input_text, history)
    session.runs.append(run.record)
    appended = 0
    if run.input is not None:
        message = (
            UserMessage(content=run.input)
            if isinstance(run.input, str)
            else parse_message(run.input, where="run input")
        )
        run.append(message)
        appended = 1
    run.emit(ContextRestored, history=history, appended=appended)
