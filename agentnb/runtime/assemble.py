"""assemble: instructions + tool schemas + history -> the exact request (000 §2.2, 002 §2.2).

The agent's :class:`~agentnb.context.ContextPolicy` chooses which spans of the history go in
(all of it by default), within the token budget: window, reply reserve, instructions, tool
schemas, history. The request is recorded by reference to the transcript's message list, so
assembling copies no history and every request of a session stays rebuildable exactly.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ..context.framing import framed_source, framed_system
from ..context.policies import Budget, KeepAll, Selection, message_counter
from ..events import RequestAssembled
from ..messages import Message
from ..models.base import ModelRequest
from ..session.records import RequestRecord
from ..tokens import DEFAULT_TOKENIZER
from .state import RunState


async def assemble(state: RunState, *, tools_enabled: bool = True) -> ModelRequest:
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
    default = tokenizer is DEFAULT_TOKENIZER
    memory = _memory(state, history) if session.memory is not None else None
    memory_tokens = tokenizer.count_message(memory) if memory else 0
    instructions = prompt.instructions_tokens + memory_tokens  # recalled memory rides with them
    tools_tokens = prompt.tools_tokens if tools else 0
    whole = transcript.tokens if default else sum(map(tokenizer.count_message, transcript.wires))
    window = agent.context_window
    policy = prompt.policy
    if type(policy) is KeepAll:  # everything goes in: nothing to weigh
        selection, spans, history_tokens = _NOTHING_LEFT_OUT, ((0, len(history)),), whole
    else:
        count = message_counter(tokenizer)
        budget = Budget(instructions, tools_tokens, whole, window, agent.reply_reserve, count)
        selection = policy.select(history, budget)
        if inspect.isawaitable(selection):  # a policy that asks a model (a summariser)
            selection = await selection
        spans = selection.spans
        history_tokens = sum(count(m) for a, b in spans for m in history[a:b])
        history_tokens += sum(map(tokenizer.count_message, selection.inserted))
    system = prompt.system
    source = transcript.wires
    if agent.frame_results is not None:  # spotlighting: the results framed, the note added
        system = framed_system(system)
        source = framed_source(session, source, transcript.rewrites)
    inserted = selection.inserted if memory is None else (memory, *selection.inserted)
    head = (system, *inserted) if system is not None else inserted
    previous = session.requests[-1].request if session.requests else None
    request = ModelRequest(
        tools=tools, params=params, head=head, source=source, spans=spans, after=previous
    )
    total = instructions + tools_tokens + history_tokens
    report = {
        "instructions": prompt.instructions_tokens,
        "tools": tools_tokens,
        "history": history_tokens,
        "total": total,
    }
    if memory is not None:
        report["memory"] = memory_tokens
    note = selection.note
    if window is not None:
        report["context_window"] = window
        report["reply_reserve"] = agent.reply_reserve
        report["available"] = available = window - agent.reply_reserve - total
        if available < 0:  # never silently: the newest turn alone does not fit
            over = f"still {-available} tokens over the window: the newest turn alone does not fit"
            note = f"{note}; {over}" if note else over
    request.estimate = total
    session.requests.append(
        RequestRecord(state.id, state.iteration, request, report, policy.name, note or "")
    )
    state.emit(
        RequestAssembled,
        request=request,
        budget=report,
        policy=policy.name,
        dropped=selection.dropped,
        summarised=selection.summarised,
        note=note,
    )
    return request


_NOTHING_LEFT_OUT = Selection(())  # what KeepAll leaves out, inserts and notes: nothing


def _memory(state: RunState, history: Sequence[Message]) -> dict[str, Any] | None:
    """The session's recalled memory for the newest user message, as a marked message."""
    memory = state.session.memory
    if memory is None:
        return None
    for message in reversed(history):
        if message.role == "user":
            return memory.message(message.text)
    return None
