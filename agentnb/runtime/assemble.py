"""assemble: instructions + tool schemas + history -> the exact request (000 §2.2, 002 §2.2).

The request reuses each message's cached wire dict, so assembling costs one list of
references, not a copy of the history. The budget breakdown (estimated tokens) travels
with the request in the ``RequestAssembled`` event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..events import RequestAssembled
from ..models.base import ModelRequest

if TYPE_CHECKING:
    from .run import Run


def assemble(run: Run) -> None:
    session = run.session
    if not session.is_valid:
        session.check()  # raises InvalidConversation with the problems in words
    agent = run.agent
    run.iteration += 1
    system = agent.system_wire()
    history = session._wires
    messages: list[dict[str, Any]] = [system, *history] if system is not None else list(history)
    params: dict[str, Any] = dict(agent.model_params)
    if run.wrap_up:
        tools: list[dict[str, Any]] = []
        tool_tokens = 0
    else:
        tools = agent.tools.schemas()
        tool_tokens = agent.tools_tokens()
        if tools and agent.parallel_tool_calls is not None:
            params["parallel_tool_calls"] = agent.parallel_tool_calls
    instructions = agent.instructions_tokens()
    total = instructions + tool_tokens + session.tokens
    budget = {
        "instructions": instructions,
        "tools": tool_tokens,
        "history": session.tokens,
        "total": total,
    }
    if agent.context_window:
        budget["context_window"] = agent.context_window
        budget["reply_reserve"] = agent.reply_reserve
        budget["available"] = agent.context_window - agent.reply_reserve - total
    run.request = ModelRequest(messages, tools, params)
    run.prompt_estimate = total
    run.emit(RequestAssembled, request=run.request, budget=budget)
