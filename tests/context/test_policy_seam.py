"""The ContextPolicy seam at assemble: what the policy selects is sent; DropOldest by default once a window is set, never splitting a call from its results."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.context import Budget, Selection, turn_groups
from agentnb.messages import Message
from agentnb.models import ScriptedModel
from agentnb.testing import assert_valid_conversation
from tests.helpers import call, calls


class LastTwo:
    name = "last_two"

    def select(self, history: Sequence[Message], budget: Budget) -> Selection:
        start = turn_groups(history)[-2][0] if len(turn_groups(history)) > 1 else 0
        summary = {"role": "system", "content": f"[{start} earlier messages left out]"}
        return Selection(((start, len(history)),), (summary,), ((0, start),), note="kept two")


async def test_assemble_sends_what_the_policy_selects(tools):
    session = an.Session([{"role": "user", "content": f"m{i}"} for i in range(5)])
    model = ScriptedModel(["ok"])
    result = await an.Agent("sys", tools, model=model, context=LastTwo()).run("q", session=session)
    sent = model.requests[0].messages
    assert [m["content"] for m in sent] == ["sys", "[4 earlier messages left out]", "m4", "q"]
    event = result.trace.of_type(an.events.RequestAssembled)[0]
    assert event.policy == "last_two" and event.dropped == ((0, 4),) and event.note == "kept two"


async def test_drop_oldest_is_the_default_once_a_window_is_set():
    history = []
    for i in range(30):
        history += [
            {"role": "user", "content": "问题" * 20},
            {"role": "assistant", "content": f"答{i}"},
        ]
    session = an.Session(history)
    model = ScriptedModel(["ok"])
    agent = an.Agent("sys", model=model, context_window=400, reply_reserve=100)
    result = await agent.run("最新的问题", session=session)
    event = result.trace.of_type(an.events.RequestAssembled)[0]
    assert event.policy == "drop_oldest" and event.dropped and "dropped" in event.note
    sent = model.requests[0].messages
    assert sent[0] == {"role": "system", "content": "sys"}
    assert sent[-1] == {"role": "user", "content": "最新的问题"}
    assert event.budget["history"] <= 400 - 100 - event.budget["instructions"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=40), st.integers(20, 300))
def test_drop_oldest_never_separates_a_call_from_its_results(shape, window):
    history: list[dict] = []
    for i, kind in enumerate(shape):
        if kind == 0:
            history.append({"role": "user", "content": f"u{i} " * 5})
        elif kind == 1:
            history.append({"role": "assistant", "content": f"a{i}"})
        else:
            ids = [f"c{i}_{k}" for k in range(kind - 1)]
            history.append(calls(*(call(x, "f", q=i) for x in ids)))
            history += [{"role": "tool", "tool_call_id": x, "content": "r"} for x in ids]
    session = an.Session(history)
    budget = Budget(10, 0, session.tokens, window + 20, 10)
    selection = an.DropOldest().select(session.messages, budget)
    kept = [m for a, b in selection.spans for m in session.to_openai()[a:b]]
    assert_valid_conversation(kept)
