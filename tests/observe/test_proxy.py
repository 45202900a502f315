"""The recording proxy against the fault-injecting server: the openai SDK changes only its base
URL; the app gets the upstream's bytes and errors unchanged; the sessions hold what it sent."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

import agentnb as an
from agentnb.observe.calls import UpstreamFailed
from agentnb.storage.codec import event_to_dict
from tests.helpers import eventually_sync
from tests.observe.observe_helpers import KEY, canonical
from tests.servers.fault_server import Step, completion, reply, text_chunks

WEATHER = {
    "type": "function",
    "function": {
        "name": "search_weather",
        "description": "Weather for a city on a date",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "search_weather", "arguments": '{"city": "北京"}'},
}


_CLIENTS: list[openai.OpenAI] = []


def client(proxy, **options):
    app = openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0, **options)
    _CLIENTS.append(app)
    return app


@pytest.fixture(autouse=True)
def close_clients():
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def sse(chunks):
    return b"".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n".encode() for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def test_a_tool_using_conversation_is_recorded_message_for_message(fault_server):
    fault_server.script(
        Step(
            body=completion(
                {"role": "assistant", "content": None, "tool_calls": [CALL]}, finish="tool_calls"
            )
        ),
        reply("周五北京晴。"),
    )
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        app = client(proxy)
        sent = [
            {"role": "system", "content": "You are a travel assistant."},
            {"role": "user", "content": "北京周五天气？"},
        ]
        first = app.chat.completions.create(model="m", messages=sent, tools=[WEATHER])
        assistant = first.choices[0].message.model_dump(exclude_none=True)
        sent += [assistant, {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "晴"}'}]
        second = app.chat.completions.create(model="m", messages=sent, tools=[WEATHER])
        sent.append(second.choices[0].message.model_dump(exclude_none=True))
        (session,) = proxy.sessions
        assert canonical(session.to_openai()) == canonical(sent)
        assert session.to_openai()[:2] == sent[:2]
        assert session.is_valid, session.problems  # the call in reply 1 is paired with request 2
        assert [len(r.request.messages) for r in session.requests] == [2, 4]
        assert session.requests[0].request.tools == [WEATHER]
        assert [c.status for c in proxy.calls] == [200, 200]
        assert all(c.latency > 0 for c in proxy.calls)
    # what the upstream got is what the app sent, key included (forwarded, not stored)
    assert [r["body"]["messages"] for r in fault_server.requests] == [sent[:2], sent[:4]]
    assert fault_server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_a_proxied_tool_result_carries_the_name_its_call_has(fault_server):
    """The formats send a tool result with the call's id only; the session's tool messages
    had no name, so a check written for agentnb runs (the tool's name on its result)
    answered differently for an app (issue 36). The name comes from the call it answers."""
    fault_server.script(
        Step(body=completion({"role": "assistant", "content": None, "tool_calls": [CALL]},
                             finish="tool_calls")),
        reply("周五北京晴。"),
    )  # fmt: skip
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        app = client(proxy)
        sent = [{"role": "user", "content": "北京周五天气？"}]
        first = app.chat.completions.create(model="m", messages=sent, tools=[WEATHER])
        sent += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "晴"}'}]  # fmt: skip
        app.chat.completions.create(model="m", messages=sent, tools=[WEATHER])
        (session,) = proxy.sessions
    (result,) = [m for m in session.to_openai() if m["role"] == "tool"]
    assert result["name"] == "search_weather" and result["tool_call_id"] == "call_1"
    assert "name" not in sent[-1]  # what the app sent is recorded as sent
    assert session.requests[1].request.messages[-1] == sent[-1]


def test_a_stream_arrives_byte_identical_and_chunk_by_chunk(fault_server):
    chunks = text_chunks("Hel", "lo ", "北京", "!")
    fault_server.script(Step(chunks=chunks, chunk_delay=0.15))
    direct = httpx.post(
        f"{fault_server.base_url}/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True},
    ).content
    assert direct == sse(chunks)
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        app = client(proxy)
        started = time.monotonic()
        arrivals, parts = [], []
        with app.chat.completions.with_streaming_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        ) as response:
            for part in response.iter_bytes():
                arrivals.append(time.monotonic() - started)
                parts.append(part)
        assert b"".join(parts) == direct
        # chunk by chunk: the first arrived long before the last (0.15 s apart upstream)
        assert len(parts) >= 4 and arrivals[-1] - arrivals[0] > 0.4
        assert arrivals[0] < 0.35
        # the SDK's own stream through the proxy assembles the same text
        stream = app.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "again"}], stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text == "Hello 北京!"
        first, again = proxy.sessions[0], proxy.sessions[1]
        assert first.to_openai()[-1] == {"role": "assistant", "content": "Hello 北京!"}
        assert again.to_openai()[-1]["content"] == text
        call = proxy.calls[0]
        assert call.stream and call.response.encode() == direct
        assert 0.1 < call.first_chunk < call.latency
        deltas = [e for e in _events(first) if e.type == "ModelDelta"]
        assert [d.delta for d in deltas] == ["Hel", "lo ", "北京", "!"]


def _events(session):
    return session._test_events


@pytest.fixture(autouse=True)
def keep_events(monkeypatch):
    """Subscribe to every session the threading creates, to assert its events."""
    from agentnb.observe import conversations as threads

    original = threads.Conversations._add

    def add(self, thread):
        session = thread.session
        session._test_events = []
        session.subscribe(session._test_events.append)
        return original(self, thread)

    monkeypatch.setattr(threads.Conversations, "_add", add)


def test_models_and_unknown_paths_pass_through(fault_server):
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        listing = client(proxy).models.list()
        assert [m.id for m in listing.data] == ["fault"]
        fault_server.script(reply("not a chat"))
        other = httpx.post(f"{proxy.base_url}/embeddings", json={"input": "x"})
        assert other.status_code == 200 and other.json()["choices"][0]["message"]["content"]
        assert proxy.sessions == [] and proxy.calls == []
    assert [r["path"] for r in fault_server.requests][-1] == "/v1/embeddings"


def test_upstream_errors_reach_the_app_unchanged_and_are_recorded(fault_server):
    body = {"error": {"message": "slow down", "type": "rate_limit"}}
    fault_server.script(Step(status=429, body=body, headers={"Retry-After": "7"}))
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        with pytest.raises(openai.RateLimitError) as caught:
            client(proxy).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
        assert caught.value.response.headers["retry-after"] == "7"
        assert caught.value.response.json() == body
        (session,) = proxy.sessions
        failed = [e for e in session._test_events if isinstance(e, UpstreamFailed)]
        assert failed and failed[0].status == 429 and "slow down" in failed[0].error
        stopped = session._test_events[-1]
        assert stopped.type == "RunStopped" and stopped.reason == "error"
        assert proxy.calls[0].status == 429 and not proxy.calls[0].ok
        # the conversation can go on after the error: the retry continues the same session
        fault_server.script(reply("ok now"))
        client(proxy).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert len(proxy.sessions) == 1 and proxy.sessions[0].to_openai()[-1]["content"] == "ok now"


def test_a_cut_stream_is_cut_for_the_app_and_recorded(fault_server):
    fault_server.script(Step(chunks=text_chunks("a", "b", "c", "d"), cut_after=2))

    def chat(base_url):
        app = openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0)
        stream = app.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        return [c.choices[0].delta.content for c in stream]

    direct = chat(fault_server.base_url)
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        assert chat(proxy.base_url) == direct == [None, "a"]  # the app sees the same cut
        eventually_sync(lambda: proxy.calls and proxy.calls[0].error, what="the call's error")
        assert "broke off" in proxy.calls[0].error
        (session,) = proxy.sessions
        assert [m["role"] for m in session.to_openai()] == ["user"]  # no partial reply kept
        assert session._test_events[-1].reason == "error"


def test_an_unreachable_or_silent_upstream_is_a_gateway_error(fault_server):
    fault_server.script(Step(drop=True))
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        with pytest.raises(openai.InternalServerError) as caught:
            client(proxy).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
        assert caught.value.status_code == 502
        assert proxy.calls[0].error and proxy.calls[0].status is None
    fault_server.script(Step(delay=3.0, body=completion({"role": "assistant", "content": "late"})))
    with an.observe.proxy(upstream=fault_server.base_url, timeout=0.5) as proxy:
        with pytest.raises(openai.APIStatusError) as caught:
            client(proxy).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
        assert caught.value.status_code == 504
        assert caught.value.response.json()["error"]["type"] == "upstream_timeout"


def test_results_that_never_came_back_are_flagged(fault_server):
    fault_server.script(
        Step(
            body=completion(
                {"role": "assistant", "content": None, "tool_calls": [CALL]}, finish="tool_calls"
            )
        ),
        reply("fine"),
    )
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        app = client(proxy)
        sent = [{"role": "user", "content": "北京周五天气？"}]
        first = app.chat.completions.create(model="m", messages=sent, tools=[WEATHER])
        assert proxy.sessions[0].open_calls == {"call_1": "search_weather"}
        # the app goes on without answering the call
        sent += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "user", "content": "never mind"},
        ]
        app.chat.completions.create(model="m", messages=sent, tools=[WEATHER])
        (session,) = proxy.sessions
        assert not session.is_valid
        assert any("call_1" in p.text for p in session.problems), session.problems
        assert {p.kind for p in session.problems} == {"unanswered"}, session.problems


def test_the_saved_cassette_replays_the_conversation_offline(fault_server, tmp_path):
    fault_server.script(
        Step(
            body=completion(
                {"role": "assistant", "content": None, "tool_calls": [CALL]}, finish="tool_calls"
            )
        ),
        Step(chunks=text_chunks("周五", "北京", "晴")),
    )
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        app = client(proxy)
        sent = [{"role": "user", "content": "北京周五天气？"}]
        first = app.chat.completions.create(
            model="m", messages=sent, tools=[WEATHER], temperature=0
        )
        sent += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_1", "content": "晴"},
        ]
        stream = app.chat.completions.create(
            model="m", messages=sent, tools=[WEATHER], temperature=0, stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        path = proxy.save_cassette(tmp_path / "app.jsonl")
        (session,) = proxy.sessions
    assert KEY not in path.read_text(encoding="utf-8")
    cassette = an.models.Cassette(path)
    assert len([e for e in cassette.entries if not e.get("twin")]) == 2  # + a twin each
    # 1. OpenAIModel + the cassette reproduce each call from the session's own requests
    for request, stream, want in [
        (session.requests[0].request, False, session.messages[1]),
        (session.requests[1].request, True, session.messages[3]),
    ]:
        model = cassette.replay(stream=stream)
        if stream:
            from agentnb.models import ReplyAssembler

            assembler = ReplyAssembler()
            async_deltas = model.stream(request)
            import asyncio

            async def drain(deltas=async_deltas, assembler=assembler):
                async for d in deltas:
                    assembler.add(d)

            asyncio.run(drain())
            got = assembler.result().message
        else:
            import asyncio

            got = asyncio.run(model.complete(request)).message
        assert canonical([got.wire()]) == canonical([want.wire()])
        # asked in the other mode (notebook 15's recipe: complete() on a streamed call)
        import asyncio

        other = asyncio.run(cassette.replay(stream=not stream).complete(request)).message
        assert canonical([other.wire()]) == canonical([want.wire()])
    # 2. the app itself, unchanged but for its HTTP client, replays offline
    from agentnb.models.replay import ReplayTransport

    offline = openai.AsyncOpenAI(
        base_url="http://cassette.invalid/v1",
        api_key="x",
        http_client=httpx.AsyncClient(transport=ReplayTransport(an.models.Cassette(path))),
    )

    async def again():
        one = await offline.chat.completions.create(
            model="m", messages=sent[:1], tools=[WEATHER], temperature=0
        )
        two = await offline.chat.completions.create(
            model="m", messages=sent, tools=[WEATHER], temperature=0, stream=True
        )
        return one, "".join([c.choices[0].delta.content or "" async for c in two if c.choices])

    import asyncio

    one, replayed = asyncio.run(again())
    assert one.choices[0].message.tool_calls[0].id == "call_1"
    assert replayed == text == "周五北京晴"


def test_the_key_is_forwarded_and_never_kept(fault_server, tmp_path):
    body = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}
    fault_server.script(reply("hi"), Step(status=401, body=body))
    with an.observe.proxy(upstream=fault_server.base_url) as proxy:
        app = client(proxy, default_headers={"x-api-key": KEY})
        app.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        with pytest.raises(openai.AuthenticationError) as caught:
            app.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}])
        assert KEY in caught.value.response.text  # the app sees the upstream's words unchanged
        kept = [
            json.dumps([s.to_openai() for s in proxy.sessions], ensure_ascii=False),
            json.dumps(
                [event_to_dict(e) for s in proxy.sessions for e in s._test_events],
                ensure_ascii=False,
                default=str,
            ),
            repr(proxy),
            repr(proxy.calls),
            json.dumps([c.body for c in proxy.calls]),
            " ".join(c.response + (c.error or "") for c in proxy.calls),
            proxy.save_cassette(tmp_path / "k.jsonl").read_text(encoding="utf-8"),
        ]
        trace = an.Trace([e for s in proxy.sessions for e in s._test_events])
        kept.append(trace.save(tmp_path / "proxied.jsonl").read_text(encoding="utf-8"))
        store = an.SQLiteStore(tmp_path / "sessions.db")
        for session in proxy.sessions:
            store.commit(session.id, 0, session.wire())
        kept.append((tmp_path / "sessions.db").read_bytes().decode("utf-8", "replace"))
        assert all(KEY not in text for text in kept)
        assert any("***" in text for text in kept)  # masked where the upstream echoed it
    assert fault_server.requests[0]["headers"]["x-api-key"] == KEY
