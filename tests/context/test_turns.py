"""DropOldest drops whole turns, as the README says: an answer never outlives its question."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.context import turns
from agentnb.messages import parse_message
from agentnb.models import ScriptedModel
from agentnb.testing import assert_valid_conversation
from tests.helpers import call, calls


def history_of(shape: list[tuple[int, int]]) -> list[dict]:
    """Turns: (tool rounds, answer length) each -> a question, its tool calls, an answer."""
    out: list[dict] = []
    for t, (rounds, size) in enumerate(shape):
        out.append({"role": "user", "content": f"问题{t}：" + "北京天气" * (1 + size)})
        for r in range(rounds):
            ids = [f"c{t}_{r}_{k}" for k in range(1 + (t + r) % 2)]
            out.append(calls(*(call(x, "search_weather", city="北京", date="x") for x in ids)))
            out += [{"role": "tool", "tool_call_id": x, "content": "晴 " * (5 + size)} for x in ids]
        out.append({"role": "assistant", "content": f"回答{t} " + "好" * (3 * size)})
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 12)), min_size=1, max_size=12),
    st.integers(60, 900),
)
def test_drop_oldest_drops_whole_turns_only(shape, window):
    history = history_of(shape)
    model = ScriptedModel(["ok"])
    agent = an.Agent("你是差旅助手。", model=model, context_window=window, reply_reserve=20,
                     context=an.DropOldest())  # fmt: skip
    result = agent.run_sync("最新的问题", session=an.Session(history))
    sent = model.requests[0].messages[1:]
    event = result.trace.of_type(an.events.RequestAssembled)[0]
    assert sent[-1] == {"role": "user", "content": "最新的问题"}
    assert_valid_conversation(sent)
    kept_history = sent[:-1]
    # What is kept is a suffix of the history that starts at a question (or is empty)...
    assert kept_history == history[len(history) - len(kept_history) :]
    if kept_history:
        assert kept_history[0]["role"] == "user"
    # ...and what was dropped is whole turns, said in the event.
    dropped = len(history) - len(kept_history)
    starts = {a for a, _ in turns([parse_message(m) for m in history])}
    assert dropped == 0 or dropped == len(history) or dropped in starts
    assert event.dropped == (((0, dropped),) if dropped else ())


def test_the_answer_whose_question_was_dropped_is_dropped_too():
    """The case found in notebook 08: a long question and a short answer."""
    history = [
        {"role": "user", "content": "长问题 " * 200},
        {"role": "assistant", "content": "短回答"},
        {"role": "user", "content": "第二个问题"},
        {"role": "assistant", "content": "第二个回答"},
    ]
    model = ScriptedModel(["ok"])
    agent = an.Agent("sys", model=model, context_window=300, reply_reserve=20)
    agent.run_sync("最新的问题", session=an.Session(history))
    sent = model.requests[0].messages
    assert [m["content"] for m in sent[1:]] == ["第二个问题", "第二个回答", "最新的问题"]


def test_turns_split_at_questions_and_keep_corrections_inside():
    msgs = [parse_message(m) for m in [
        {"role": "system", "content": "carried", "name": "agentnb_memory"},
        {"role": "user", "content": "q1"},
        calls(call("a", "t")),
        {"role": "tool", "tool_call_id": "a", "content": "r"},
        {"role": "user", "content": "fix your call", "name": "agentnb"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]]  # fmt: skip
    assert turns(msgs) == [(0, 1), (1, 6), (6, 7)]
