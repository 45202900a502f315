"""One tier for every API an app may speak, with the real SDKs (issue 30): the openai SDK on
Chat Completions and the Responses API, openai-agents on its default Responses model, the
anthropic SDK - whole and streamed - through the proxy in front of the stand-in. The app is
unchanged (the same answer as without the proxy, the same bytes as the upstream sent), its
session equals what it sent (in the sessions' Chat Completions shape), every tool call is
paired with its result, and each call is one run of that session."""

from __future__ import annotations

import asyncio

import pytest

import agentnb as an
from agentnb.models.wire import WIRES
from agentnb.models.wire.anthropic import to_messages as anthropic_messages
from agentnb.models.wire.responses import to_messages as responses_messages
from agentnb.observe.conversations import canonical
from tests.observe.apps import APPS, TRAVEL

pytest.importorskip("anthropic")
pytest.importorskip("agents")


@pytest.fixture(scope="module")
def standin():
    with an.observe.serve() as server:
        yield server


def _keys(messages):
    return [canonical(m) for m in messages]


def _expected(name, run, calls):
    """What the app sent and received, in the sessions' shape."""
    if name.startswith("openai-chat"):
        return run.extra["messages"]
    if name.startswith("openai-responses"):
        return responses_messages(run.extra["items"], TRAVEL.instructions)
    if name.startswith("anthropic"):
        return anthropic_messages(run.extra["messages"], TRAVEL.instructions)
    last = calls[-1]  # openai-agents sends its whole input every turn
    return [*WIRES[last.api].read_request(last.body).messages, last.reply.message]


@pytest.mark.parametrize("name", list(APPS))
def test_an_app_on_any_api_is_recorded_as_it_talked(standin, name):
    app, options = APPS[name]
    direct = asyncio.run(app(standin.base_url, standin.url, **options))
    with an.observe.proxy(upstream=standin.base_url) as proxy:
        run = asyncio.run(app(proxy.base_url, proxy.url, **options))
        sessions, calls = proxy.sessions, proxy.calls
    assert run.answer == direct.answer and run.answer  # the app is unchanged
    assert [c.response.encode() for c in calls] == run.tap.bodies  # byte for byte
    assert all(c.ok for c in calls), [c.error for c in calls]
    assert len(calls) >= 2 and {c.api for c in calls} == {calls[0].api}
    (session,) = sessions  # one conversation, however it was threaded
    assert _keys(session.to_openai()) == _keys(_expected(name, run, calls))
    assert session.is_valid, session.problems  # every call paired with its result
    assert sum(len(m.get("tool_calls") or ()) for m in session.to_openai()) >= 1
    assert [r.run_id for r in session.runs] == [c.id for c in calls]
    assert all(r.stop_reason in ("custom", "final_answer") for r in session.runs)
    assert [r.request.tools != [] for r in session.requests] == [True] * len(calls)
    assert all(c.stream == ("stream" in name) for c in calls)
