"""Bug: TravelModel ignored the facts a session carries (``session.fresh(carry=[…])``) and the
items ``an.Memory`` recalls: both arrive as a system message named ``agentnb_memory``, and the
model read trip details from user messages only, so it asked again for the origin."""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb.models.base import ModelRequest
from agentnb.travel import TravelModel, travel_agent

ASK = "帮我看看周五北京的航班"


def first_call(result: an.RunResult) -> tuple[str, dict]:
    call = result.tool_calls[0].function
    return call.name, json.loads(call.arguments)


@pytest.mark.parametrize("fact", ["出发地：上海", "用户常驻上海", "Origin: Shanghai"])
async def test_carried_facts_ignored(fact):
    old = an.Session(id="trip")
    result = await travel_agent().run(ASK, session=old.fresh(carry=[fact]))
    assert first_call(result) == (
        "search_flights",
        {"departure": "上海", "destination": "北京", "date": "周五"},
    )
    assert "出发城市" not in result.output and "MU5101" in result.output


async def test_carried_facts_ignored_the_user_s_own_words_take_precedence():
    old = an.Session(id="trip")
    carried = old.fresh(carry=["出发地：上海", "目的地：成都"])
    result = await travel_agent().run("周五从广州去北京的航班", session=carried)
    assert first_call(result)[1] == {"departure": "广州", "destination": "北京", "date": "周五"}
    # an earlier user turn is newer than the carried facts too
    carried = old.fresh(carry=["出发地：上海"])
    agent = travel_agent()
    await agent.run("我从广州出发", session=carried)
    result = await agent.run(ASK, session=carried)
    assert first_call(result)[1]["departure"] == "广州"


async def test_carried_facts_ignored_recalled_memory_is_read_too(tmp_path):
    store = an.SQLiteStore(tmp_path / "memory.db")
    memory = an.Memory(store, user="alice")
    memory.remember("用户常住上海，常订周五的航班")
    session = an.Session(id="t", store=store, memory=memory)
    result = await travel_agent().run(ASK, session=session)
    assert session.snapshots[0].messages[1]["name"] == "agentnb_memory"
    assert first_call(result)[1]["departure"] == "上海"


def test_carried_facts_ignored_only_marked_messages_and_no_tool_results():
    model = TravelModel()

    def origin(*messages: dict) -> str | None:
        request = ModelRequest([*messages, {"role": "user", "content": ASK}], [], {})
        return model.read(request).request.origin

    note = 'Relevant memory:\n- (tool_result) search_flights {"departure": "上海"} → {}'
    assert origin({"role": "system", "name": "agentnb_memory", "content": note}) is None
    unmarked = {"role": "system", "content": "Carried over:\n- 出发地：上海"}
    assert origin(unmarked) is None
    fact = {
        "role": "system",
        "name": "agentnb_memory",
        "content": "Relevant memory:\n- (fact) 出发地：上海",
    }
    assert origin(fact) == "上海"


def test_carried_facts_ignored_is_a_documented_rule():
    rule = TravelModel.rules()["memory"]
    assert rule["kind"] == "reading" and rule["source"] == "002 §2.2"
    assert "agentnb_memory" in rule["looks for"]
