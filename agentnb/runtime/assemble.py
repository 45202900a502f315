"""assemble: instructions + tool schemas + history -> the exact request (000 §2.2, 002 §2.2).

The agent's :class:`~agentnb.context.ContextPolicy` chooses which spans of the history go in
(all of it by default), within the token budget: window, reply reserve, instructions, tool
schemas, history. The request is recorded by reference to the transcript's message list, so
assembling copies no history and every request of a session stays rebuildable exactly.
"""

from __future__ import annotations

from typing import Any

from ..context import Budget, KeepAll, Selection
from ..events import RequestAssembled
from ..models.base import ModelRequest
from ..tokens import DEFAULT_TOKENIZER
from .state import RunState


def assemble(state: RunState, *, tools_enabled: bool = True) -> ModelRequest:
    session = state.session
    transcript = session.transcript
    if not transcript.is_valid:
        session.check()  # raises InvalidConversation with the problems in words
    agent = state.agent
    prompt = agent.prompt()
    tokenizer = prompt.tokenizer
    history = transcript.messages
    params: dict[str, Any] = dict(agent.model_params)
    tools = prompt.tools if tools_enabled else []
    if tools and agent.parallel_tool_calls is not None:
        params["parallel_tool_calls"] = agent.parallel_tool_calls
    budget = Budget(
        prompt.instructions_tokens,
        prompt.tools_tokens if tools else 0,
        transcript.tokens
        if tokenizer is DEFAULT_TOKENIZER
        else sum(tokenizer.count_message(w) for w in transcript.wires),
        agent.context_window,
        agent.reply_reserve,
    )
    policy = prompt.policy
    history_tokens = budget.history
    if type(policy) is KeepAll:
        selection = Selection(((0, len(history)),))
    else:
        selection = policy.select(history, budget)
        wires, count = transcript.wires, tokenizer.count_message
        history_tokens = sum(count(wires[i]) for a, b in selection.spans for i in range(a, b))
        history_tokens += sum(count(m) for m in selection.inserted)
    system = prompt.system
    head = (system, *selection.inserted) if system is not None else selection.inserted
    request = ModelRequest(
        tools=tools, params=params, head=head, source=transcript.wires, spans=selection.spans
    )
    total = budget.instructions + budget.tools + history_tokens
    report = {
        "instructions": budget.instructions,
        "tools": budget.tools,
        "history": history_tokens,
        "total": total,
    }
    if budget.context_window is not None:
        report["context_window"] = budget.context_window
        report["reply_reserve"] = budget.reply_reserve
        report["available"] = budget.context_window - budget.reply_reserve - total
    state.prompt_estimate = total
    session.snapshots.append(request)
    state.emit(
        RequestAssembled,
        request=request,
        budget=report,
        policy=policy.name,
        dropped=selection.dropped,
        summarised=selection.summarised,
        note=selection.note,
    )
    return request
