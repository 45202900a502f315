"""The loop, written once: the only place that knows the order of the stages.

``run``, ``stream`` and ``step`` all drive this generator. After every stage it yields the
stage just done and the stage that comes next (``None`` after ``persist``); whoever drives it
decides how far to go.

    restore → (assemble → call_model → decide → [execute_tools] → check_stop)* → persist

A run that resumes a round cut short (the session ends in open calls: see ``restore``) enters
the loop at ``execute_tools``: restore → execute_tools → check_stop → assemble → ...
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from .assemble import assemble
from .call_model import call_model
from .check_stop import check_stop
from .decide import decide
from .execute_tools import execute_tools
from .persist import persist
from .restore import restore
from .state import RunState

__all__ = ["stages"]

Step = tuple[str, str | None]


async def stages(state: RunState) -> AsyncGenerator[Step, None]:
    state.stage = "restore"
    decision = await restore(state)  # the open calls of a round to finish first, if any
    yield "restore", "assemble" if decision is None else "execute_tools"
    wrap_up = False  # the last call after max_iterations, with tools off
    while True:
        if decision is None:
            state.iteration += 1
            state.stage = "assemble"
            request = await assemble(state, tools_enabled=not wrap_up)
            yield "assemble", "call_model"
            state.stage = "call_model"
            response = await call_model(state, request)
            yield "call_model", "decide"
            state.stage = "decide"
            decision = decide(state, response, tools_enabled=not wrap_up)
            yield "decide", "execute_tools" if decision.calls else "check_stop"
        if decision.calls:
            state.stage = "execute_tools"
            await execute_tools(state)
            yield "execute_tools", "check_stop"
        state.stage = "check_stop"
        verdict = check_stop(state, decision, wrap_up)
        decision = None
        if verdict.stop:
            yield "check_stop", "persist"
            break
        wrap_up = verdict.wrap_up
        yield "check_stop", "assemble"
    state.stage = "persist"
    persist(state)
    yield "persist", None
