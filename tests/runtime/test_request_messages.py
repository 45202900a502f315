"""``request.messages`` is shared across a session's requests (issue 26): reading it costs what
the new messages cost. Sharing must never show a model anything but its own request: checked
at every model call against the session, across runs, edits, forks and kept lists."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentnb as an
from agentnb.models import FunctionModel
from tests.helpers import call, calls

INSTRUCTIONS = "你是差旅助手。"


@an.tool
def lookup(city: str) -> dict:
    """A city's weather."""
    return {"city": city, "condition": "晴"}


class Witness:
    """A model that checks, at each call, that ``request.messages`` is exactly what the
    session holds, and keeps every list it was sent (as a careless model would)."""

    def __init__(self) -> None:
        self.session: an.Session | None = None
        self.kept: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
        self.calls = 0

    def __call__(self, request: Any) -> Any:
        assert self.session is not None
        messages = request.messages
        expected = [{"role": "system", "content": INSTRUCTIONS}, *self.session.to_openai()]
        assert messages == expected
        assert len(messages) == request.size
        self.kept.append((messages, copy.deepcopy(list(messages))))
        self.calls += 1
        if messages[-1]["role"] == "user" and self.calls % 2:
            return calls(call(f"c{self.calls}", "lookup", city="北京"))
        return f"答复 {self.calls}"

    def check_kept(self) -> None:
        for kept, copied in self.kept:
            assert kept == copied  # a list a model kept never changes afterwards


def agent_for(witness: Witness) -> an.Agent:
    return an.Agent(INSTRUCTIONS, [lookup], model=FunctionModel(witness, keep_requests=None))


async def run(witness: Witness, agent: an.Agent, session: an.Session, text: str | None) -> None:
    witness.session = session
    result = await agent.run(text, session=session)
    assert result.stop_reason == "final_answer", result


async def test_every_call_sees_its_session_across_runs_edits_and_forks():
    witness = Witness()
    agent = agent_for(witness)
    session = an.Session()
    await run(witness, agent, session, "北京天气？")
    await run(witness, agent, session, "上海呢？")
    session.edit(0, content="广州天气？")  # a rewrite: a new history list
    await run(witness, agent, session, "深圳呢？")
    fork = session.fork(call=1)
    await run(witness, agent, fork, None)  # the fork continues from model call 1
    await run(witness, agent, session, "杭州呢？")  # the original goes on as it was
    session.truncate(2)
    session.repair()  # the call cut from its result gets a "not executed" one
    session.append({"role": "user", "content": "重新开始"})
    await run(witness, agent, session, None)
    await run(witness, agent, fork, "再问一次")
    witness.check_kept()
    assert witness.calls >= 10


async def test_earlier_requests_read_later_are_still_exactly_what_they_sent():
    witness = Witness()
    agent = agent_for(witness)
    session = an.Session()
    for text in ("一", "二", "三"):
        await run(witness, agent, session, text)
    sent = [copied for _, copied in witness.kept]
    assert [r.request.messages for r in session.requests] == sent


def test_request_messages_are_read_only_but_copy_json_and_pickle_as_lists():
    seen: list[Any] = []
    agent = an.Agent(INSTRUCTIONS, model=FunctionModel(lambda r: seen.append(r.messages) or "好"))
    agent.run_sync("你好")
    messages = seen[0]
    with pytest.raises(TypeError, match="read only"):
        messages.append({"role": "user", "content": "x"})
    with pytest.raises(TypeError, match="read only"):
        messages[0] = {}
    with pytest.raises(TypeError, match="read only"):
        messages += [{}]
    assert type(copy.copy(messages)) is list and type(copy.deepcopy(messages)) is list
    assert json.loads(json.dumps(messages)) == messages
    assert pickle.loads(pickle.dumps(messages)) == messages
    assert type(messages + [{}]) is list  # noqa: RUF005 and type(messages[:1]) is list


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(["run", "continue", "edit", "fork", "truncate", "append"]),
        min_size=1,
        max_size=12,
    )
)
def test_random_histories_never_show_a_model_another_requests_messages(steps: list[str]):
    witness = Witness()
    agent = agent_for(witness)

    async def go() -> None:
        sessions = [an.Session()]
        for n, step in enumerate(steps):
            session = sessions[-1]
            if step == "run":
                await run(witness, agent, session, f"问题 {n}")
            elif step == "continue" and session.messages and session.messages[-1].role == "user":
                await run(witness, agent, session, None)
            elif step == "edit" and session.messages and session.messages[0].role == "user":
                session.edit(0, content=f"改过的问题 {n}")
            elif step == "fork" and len(session):
                sessions.append(session.fork())
            elif step == "truncate" and len(session) > 2:
                session.truncate(len(session) - 2)
                session.repair()
            elif step == "append":
                session.append({"role": "user", "content": f"补充 {n}"})
        witness.check_kept()

    import asyncio

    asyncio.run(go())
