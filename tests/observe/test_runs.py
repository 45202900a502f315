"""A proxied conversation is a view over ``session.runs`` (issue 35): each call is a run recorded
through the runtime's run state (``ExternalRun``), tagged with its conversation, and what
the proxy's table shows of a conversation is read from those records."""

from __future__ import annotations

import openai

import agentnb as an
from agentnb.runtime import ExternalRun
from tests.observe.observe_helpers import KEY


def _chat(proxy: an.observe.Proxy, stream: bool = False) -> None:
    app = openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
    try:
        sent = [{"role": "user", "content": "北京周五天气？"}]
        first = app.chat.completions.create(model="echo", messages=sent)
        sent += [first.choices[0].message.model_dump(exclude_none=True)]
        sent += [{"role": "user", "content": "上海呢？"}]
        if stream:  # no include_usage: the reply's usage is estimated, the call unmetered
            for _ in app.chat.completions.create(model="echo", messages=sent, stream=True):
                pass
        else:
            app.chat.completions.create(model="echo", messages=sent)
    finally:
        app.close()


def test_each_call_is_a_run_of_its_conversation_with_the_figures_of_its_events(echo_server):
    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        events: list[an.events.Event] = []
        _chat(proxy)
        (session,) = proxy.sessions
        session.subscribe(events.append)
        _chat_more = openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0)
        try:
            sent = [*session.to_openai(), {"role": "user", "content": "广州呢？"}]
            _chat_more.chat.completions.create(model="echo", messages=sent)
        finally:
            _chat_more.close()
        runs = session.runs
        assert len(runs) == len(proxy.calls) == 3
        for call, record in zip(proxy.calls, runs, strict=True):
            assert call.record is record and call.id == record.run_id
            assert record.tags == {"conversation": session.id}
            assert (record.stop_reason, record.iterations, record.model) == (
                "final_answer",
                1,
                "echo",
            )
            assert record.usage == an.models.Usage(7, 3, 10) and record.unmetered == 0
            assert record.latency > 0 and record.end == record.start + 2  # its input, its reply
        mine = [e for e in events if e.run_id == runs[-1].run_id]
        (responded,) = [e for e in mine if isinstance(e, an.events.ModelResponded)]
        (stopped,) = [e for e in mine if isinstance(e, an.events.RunStopped)]
        assert responded.usage == stopped.usage == runs[-1].usage
        assert (stopped.reason, stopped.iterations) == (runs[-1].stop_reason, 1)
        assert {e.trace_id for e in mine} == {runs[-1].trace_id}
        assert len({r.trace_id for r in runs}) == 3  # a trace per call, minted by the run state


def test_the_proxy_view_shows_what_the_records_say(echo_server):
    from agentnb.widgets.proxy_view import _row

    with an.observe.proxy(upstream=echo_server.base_url) as proxy:
        _chat(proxy, stream=True)
        (conversation,) = proxy.conversations
        runs = conversation.session.runs
        row = _row(conversation)
        assert row["calls"] == len(runs) == 2
        assert row["stop"] == runs[-1].stop_reason == "final_answer"
        assert runs[-1].usage.estimated and runs[-1].unmetered == 1  # streamed, usage not sent
        assert runs[0].unmetered == 0


def test_an_external_run_is_recorded_as_the_runtime_records_its_own():
    """The public door the proxy uses: ids minted by the run state, the record in
    ``session.runs``, messages announced, usage counted by one rule, ``RunStopped`` last."""
    session = an.Session()
    heard: list[an.events.Event] = []
    session.subscribe(heard.append)
    state = ExternalRun(session, "hello", tags={"conversation": "c1"})
    assert session.lock.hold is None  # its driver holds the lock (the proxy does)
    record = state.begin()
    assert session.runs == [record] and record.start == 0 and record.input == "hello"
    state.add({"role": "user", "content": "hello"})
    state.stage = "call_model"
    usage = state.count(None, an.models.Usage(5, 2, 7), "m")
    assert usage.estimated and record.unmetered == 1 and record.usage == usage
    state.add({"role": "assistant", "content": "hi"})
    state.conclude("final_answer", "the model answered with text", "hi")
    assert (record.stop_reason, record.stage, record.output, record.end) == (
        "final_answer",
        "call_model",
        "hi",
        2,
    )
    assert [type(e).__name__ for e in heard] == ["MessageAppended", "MessageAppended", "RunStopped"]
    assert {e.run_id for e in heard} == {record.run_id} and record.run_id.startswith("r-")
    assert record.tags == {"conversation": "c1"} and session.to_openai()[-1]["content"] == "hi"
