"""The seams later features plug into, each with a plain default: Store, Tokenizer,
ContextPolicy; and the request diff and the public test helper built on them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from helpers import call, calls
from hypothesis import given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.context import Budget, Selection, turn_groups
from agentnb.messages import Message
from agentnb.models import FunctionModel, ScriptedModel
from agentnb.testing import assert_valid_conversation


# -- Store ---------------------------------------------------------------------------------
class RecordingStore(an.MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int, int]] = []

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        self.calls.append(("commit", base, len(messages)))
        return super().commit(session_id, base, messages)

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        self.calls.append(("rewrite", base, len(messages)))
        return super().rewrite(session_id, base, messages)


async def test_a_run_commits_after_each_tool_round_and_at_persist(tools):
    store = RecordingStore()
    session = an.Session(id="trip-1", store=store)
    model = ScriptedModel([calls(call("c", "search_weather", city="北京", date="x")), "晴"])
    result = await an.Agent("sys", tools, model=model).run("天气", session=session)
    # user, assistant with the call and its result: one round; then the final answer
    assert store.calls == [("commit", 0, 3), ("commit", 1, 1)]
    persisted = result.trace.of_type(an.events.Persisted)[0]
    assert persisted.store == "memory" and persisted.version == 2 == session.version
    loaded = store.load("trip-1")
    assert loaded.to_openai() == session.to_openai() and loaded.version == 2


def test_edits_outside_runs_commit_and_rewrites_are_stored_as_rewrites():
    store = RecordingStore()
    session = an.Session([{"role": "user", "content": "a"}], id="s1", store=store)
    session.append({"role": "assistant", "content": "b"})
    session.replace(0, {"role": "user", "content": "A"})
    session.truncate(1)
    assert store.calls == [("commit", 0, 1), ("commit", 1, 1), ("rewrite", 2, 2), ("rewrite", 3, 1)]
    assert store.load("s1").to_openai() == [{"role": "user", "content": "A"}]


def test_a_second_writer_gets_a_conflict_naming_both_versions():
    store = an.MemoryStore()
    first = an.Session([{"role": "user", "content": "a"}], id="shared", store=store)
    second = store.load("shared")
    first.append({"role": "assistant", "content": "from one"})
    with pytest.raises(an.SessionConflict, match=r"version 1.*version 2") as info:
        second.append({"role": "assistant", "content": "from two"})
    assert (info.value.expected, info.value.actual) == (1, 2)
    assert [m["content"] for m in store.load("shared").to_openai()] == ["a", "from one"]
    with pytest.raises(an.SessionNotFound, match="no session 'nope'"):
        store.load("nope")
    with pytest.raises(an.ConfigurationError, match="session id"):
        an.Session(id="../etc/passwd")


# -- Tokenizer -----------------------------------------------------------------------------
class CharTokenizer:
    name = "chars"

    def count(self, text: str | None) -> int:
        return len(text or "")

    def count_message(self, wire: Any) -> int:
        return len(str(wire.get("content") or ""))

    def count_json(self, value: Any) -> int:
        return 1000


async def test_budgets_count_through_the_agents_tokenizer(tools):
    agent = an.Agent("1234567890", tools, model=ScriptedModel(["ok"]), tokenizer=CharTokenizer())
    result = await agent.run("abc")
    budget = result.trace.of_type(an.events.RequestAssembled)[0].budget
    assert budget == {"instructions": 10, "tools": 1000, "history": 3, "total": 1013}


async def test_a_model_may_bring_its_own_tokenizer(tools):
    model = ScriptedModel(["ok"])
    model.tokenizer = CharTokenizer()  # type: ignore[attr-defined]
    agent = an.Agent("12345", tools, model=model)
    assert agent.tokenizer is model.tokenizer  # type: ignore[attr-defined]
    assert agent.instructions_tokens() == 5
    assert an.Agent("12345").tokenizer.name == "heuristic"


def test_the_heuristic_counts_latin_and_cjk_and_calibrates():
    heuristic = an.HeuristicTokenizer()
    assert heuristic.count("abcdefgh") == 2 and heuristic.count("北京上海") == 2
    assert heuristic.count_message({"role": "user", "content": "abcd"}) == 5  # +4 overhead
    doubled = an.HeuristicTokenizer.calibrated(estimated=100, reported=200)
    assert doubled.count("abcdefgh") == 4


# -- ContextPolicy -------------------------------------------------------------------------
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


# -- RequestDiff, the testing helper -------------------------------------------------------
def test_request_diff_shows_a_dropped_message_as_one_removal():
    base = [{"role": "system", "content": "s"}] + [
        {"role": "user", "content": f"m{i}"} for i in range(6)
    ]
    older = an.models.ModelRequest(base)
    newer = an.models.ModelRequest([base[0], *base[2:], {"role": "user", "content": "new"}])
    diff = older.diff(newer)
    assert diff.removed == [(1, {"role": "user", "content": "m0"})]
    assert diff.added == [(6, {"role": "user", "content": "new"})] and diff.kept == 5


def test_assert_valid_conversation_names_the_problem():
    assert_valid_conversation(an.Session([{"role": "user", "content": "hi"}]))
    broken = [calls(call("c1", "f", x=1)), {"role": "user", "content": "next"}]
    with pytest.raises(AssertionError, match="c1 have no tool result"):
        assert_valid_conversation(broken)
    with pytest.raises(AssertionError, match="not an OpenAI chat message"):
        assert_valid_conversation([{"role": "tool", "content": "no id"}])


async def test_a_function_model_sees_requests_by_reference():
    seen: list[int] = []

    def reply(request: an.models.ModelRequest) -> str:
        seen.append(len(request.messages))
        return "ok"

    session = an.Session()
    for _ in range(3):
        await an.Agent("s", model=FunctionModel(reply)).run("hi", session=session)
    assert seen == [2, 4, 6] and [r.size for r in session.snapshots] == [2, 4, 6]


async def test_the_heuristic_calibrates_from_reported_usage():
    reply = {
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 60, "completion_tokens": 1, "total_tokens": 61},
    }
    result = await an.Agent("sys " * 10, model=ScriptedModel([reply])).run("hello " * 20)
    estimated = result.trace.of_type(an.events.RequestAssembled)[0].budget["total"]
    tokenizer = an.HeuristicTokenizer.from_usage(result.events)
    assert tokenizer.scale == pytest.approx(60 / estimated)
    assert an.HeuristicTokenizer.from_usage([]).scale == 1.0  # no reported usage: unchanged


def test_a_long_sessions_static_html_keeps_only_its_end():
    session = an.Session([{"role": "user", "content": f"m{i}"} for i in range(600)])
    bundle = session.static_mimebundle()
    assert "100 earlier messages not shown" in bundle["text/plain"]
    assert "#599 " in bundle["text/plain"] and "#99 " not in bundle["text/plain"]
    assert bundle["text/html"].count("m599") == 1 and "#100 user" in bundle["text/html"]
    request = an.models.ModelRequest(
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    )
    assert request.system == {"role": "system", "content": "s"}
