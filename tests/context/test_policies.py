"""Context budgets at assemble: the worked example of article 002 §2.2, every policy, memory."""

from __future__ import annotations

import asyncio
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.context import Budget
from agentnb.models import FunctionModel, ScriptedModel
from agentnb.testing import assert_valid_conversation
from tests.helpers import call, calls


class FixedTokenizer:
    """Counts a message by a number written in it, so budgets are exact in tests."""

    name = "fixed"

    def count(self, text: str | None) -> int:
        return len(text or "")

    def count_message(self, wire: dict) -> int:
        return int(str(wire.get("content") or "0").split(":")[0] or 0)

    def count_json(self, value: object) -> int:
        return 2000  # the tool schemas of the example


def test_the_worked_example_of_article_002():
    """8K window, 1K for the reply: 7K available; tools 2K, system 500: 4.5K for history."""
    history = [{"role": "user", "content": "1000: old"} for _ in range(6)]
    model = ScriptedModel(["1: ok"])
    agent = an.Agent(
        "500: system prompt",
        [an.tool(lambda city: city, name="t")] if False else [],
        model=model,
        context_window=8000,
        reply_reserve=1000,
        tokenizer=FixedTokenizer(),
    )
    agent.tools.add(an.Tool(_weather))
    result = agent.run_sync("100: new question", session=an.Session(history))
    event = result.trace.of_type(an.events.RequestAssembled)[0]
    budget = event.budget
    assert budget["context_window"] == 8000 and budget["reply_reserve"] == 1000
    assert budget["instructions"] == 500 and budget["tools"] == 2000
    # 6 x 1000 + 100 = 6100 > 4500: the oldest two go, 4100 stays.
    assert event.dropped == ((0, 2),) and budget["history"] == 4100
    assert budget["total"] == 6600 and budget["available"] == 400
    assert model.requests[0].messages[0]["content"] == "500: system prompt"


def _weather(city: str) -> str:
    """Weather."""
    return "晴"


def make_history(shape: list[int]) -> list[dict]:
    history: list[dict] = []
    for i, kind in enumerate(shape):
        if kind == 0:
            history.append({"role": "user", "content": f"第{i}个问题，" * 8})
        elif kind == 1:
            history.append({"role": "assistant", "content": f"answer {i} " * 10})
        else:
            ids = [f"c{i}_{k}" for k in range(kind - 1)]
            history.append(calls(*(call(x, "search_weather", city="北京", date="x") for x in ids)))
            history += [{"role": "tool", "tool_call_id": x, "content": "晴 " * 20} for x in ids]
    return history


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=60),
    st.sampled_from(["drop", "last", "summary"]),
    st.integers(150, 1500),
)
def test_every_policy_keeps_instructions_and_the_newest_question_and_pairs(shape, kind, window):
    policy = {
        "drop": an.DropOldest(),
        "last": an.KeepLastTurns(2),
        "summary": an.SummariseOldest(),
    }[kind]
    model = ScriptedModel(["ok"])
    agent = an.Agent(
        "你是差旅助手。", model=model, context_window=window, reply_reserve=50, context=policy
    )
    result = agent.run_sync("最新的问题", session=an.Session(make_history(shape)))
    sent = model.requests[0].messages
    assert sent[0] == {"role": "system", "content": "你是差旅助手。"}
    assert sent[-1] == {"role": "user", "content": "最新的问题"}
    history = [m for m in sent[1:] if m.get("name") != "agentnb_summary"]
    assert_valid_conversation(history)  # no orphaned tool message, no call without results
    event = result.trace.of_type(an.events.RequestAssembled)[0]
    assert event.policy == policy.name
    if kind == "summary" and event.summarised:
        assert (
            sent[1]["name"] == "agentnb_summary" and "Summary of messages #0" in sent[1]["content"]
        )


def test_2000_messages_assemble_into_a_4000_token_window_quickly():
    shape = [0, 2, 1] * 500  # user, a call with its result, an answer: 2,000 messages
    session = an.Session(make_history(shape))
    assert len(session) == 2000
    model = ScriptedModel(["ok"])
    agent = an.Agent("sys", model=model, context_window=4000, reply_reserve=500)
    start = time.perf_counter()
    result = agent.run_sync("new", session=session)
    elapsed = time.perf_counter() - start
    event = result.trace.of_type(an.events.RequestAssembled)[0]
    assert event.budget["total"] <= 4000 - 500 and event.dropped
    assert_valid_conversation(model.requests[0].messages[1:])
    assert elapsed < 1.0  # generous here; `make bench` reports the figure (a few ms)


async def test_summarise_oldest_with_a_model_summariser_and_a_cache():
    asked: list[str] = []

    def summarise(request: an.models.ModelRequest) -> str:
        asked.append(request.messages[-1]["content"])
        return "- the user flies 上海 → 北京 on Friday"

    policy = an.SummariseOldest(an.ModelSummariser(FunctionModel(summarise)))
    session = an.Session(make_history([0, 1] * 30))
    model = ScriptedModel(["a", "b"])
    agent = an.Agent("sys", model=model, context_window=600, reply_reserve=100, context=policy)
    await agent.run("q1", session=session)
    assert len(asked) == 1 and "user:" in asked[0]  # one model call for the summary
    sent = model.requests[0].messages
    assert sent[1]["name"] == "agentnb_summary" and "上海 → 北京" in sent[1]["content"]
    event = (await agent.run("q2", session=session)).trace.of_type(an.events.RequestAssembled)[0]
    assert event.summarised and "summarised" in event.note
    assert event.budget["total"] <= 600 - 100


def test_keep_last_turns_counts_user_turns():
    history = make_history([0, 2, 1, 0, 1, 0, 2, 1])
    budget = Budget(0, 0, 0)
    selection = an.KeepLastTurns(2).select(an.Session(history).messages, budget)
    assert selection.spans == ((4, 10),) and selection.dropped == ((0, 4),)
    assert "kept the last 2 turns" in selection.note


def test_long_term_memory_is_recalled_into_the_request_and_saved_from_tool_results(tmp_path):
    store = an.SQLiteStore(tmp_path / "memory.db")
    memory = an.Memory(store, user="alice")
    memory.remember("用户常住上海，出差喜欢住全季酒店")
    memory.remember("The user is vegetarian")
    model = ScriptedModel([calls(call("w", "search_weather", city="北京", date="x")), "晴"])
    agent = an.Agent("sys", [_weather_tool()], model=model)
    session = an.Session(id="trip-1", store=store, memory=memory)
    result = agent.run_sync("帮我订北京的全季酒店", session=session)
    sent = model.requests[0].messages
    assert sent[1]["name"] == "agentnb_memory" and "全季" in sent[1]["content"]
    assert "vegetarian" not in sent[1]["content"]  # no shared key: not recalled
    assert result.trace.of_type(an.events.RequestAssembled)[0].budget["memory"] > 0
    saved = [item for item in memory.items() if item["kind"] == "tool_result"]
    assert len(saved) == 1 and saved[0]["text"].startswith("search_weather")
    # A new session of the same user, in another store object: the memory is still there.
    again = an.Memory(an.SQLiteStore(tmp_path / "memory.db"), user="alice")
    assert again.recall("北京天气")[0]["text"].startswith("search_weather")
    assert an.Memory(store, user="bob").items() == []


def _weather_tool() -> an.Tool:
    @an.tool
    def search_weather(city: str, date: str) -> dict:
        """Weather."""
        return {"city": city, "condition": "晴"}

    return search_weather


async def test_a_fresh_session_per_task_carries_only_what_is_chosen():
    """Article 000 §5.4: leftover hotel talk makes a ghost search_hotels call; a fresh session
    for the new task does not, and carries the facts chosen."""
    agent = an.travel.travel_agent(an.travel.TravelModel(misbehave="ghost_call"))
    old = an.Session()
    await agent.run("帮我查一下北京的酒店", session=old)
    ghost = await agent.run("北京周五天气怎么样？", session=old)
    assert "search_hotels" in [c.name for c in ghost.tool_calls]
    new = old.fresh(carry=["出发地：上海"])
    clean = await agent.run("北京周五天气怎么样？", session=new)
    assert "search_hotels" not in [c.name for c in clean.tool_calls]
    assert new.messages[0].name == "agentnb_memory" and "上海" in new.messages[0].text
    assert new.store is old.store and new.forked_from == old.id


async def test_context_assembly_does_not_block_other_sessions():
    """A policy that awaits a model (a summariser) lets other runs go on meanwhile."""
    gate = asyncio.Event()

    class Slow:
        name = "slow"

        async def summarise(self, messages: object) -> str:
            await gate.wait()
            return "- summary"

    slow_agent = an.Agent(
        "s", model=ScriptedModel(["a"]), context_window=300, reply_reserve=10,
        context=an.SummariseOldest(Slow()),
    )  # fmt: skip
    fast_agent = an.Agent("s", model=ScriptedModel(["b"]))
    slow = asyncio.ensure_future(slow_agent.run("q", session=an.Session(make_history([0, 1] * 20))))
    fast = await fast_agent.run("q")
    assert fast.output == "b" and not slow.done()
    gate.set()
    assert (await slow).output == "a"
