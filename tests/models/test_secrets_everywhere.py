"""Keys leak (hostile round 3, class 1): one secrets policy masks every credential, however
it was given, in every artefact a run produces. The grep test runs a recorded, failing,
retried, streamed and a cancelled run with the key given each way and finds it nowhere."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

import agentnb as an
from agentnb.errors import ConfigurationError, ModelHTTPError
from agentnb.models import ModelRequest
from agentnb.models.openai import OpenAIModel
from agentnb.models.openai.retry import RetryPolicy
from agentnb.models.replay import record
from agentnb.widgets import payload
from tests.helpers import eventually
from tests.models.openai_helpers import Recorder, completion, sse

KEY = "sk-live-ABCDEF0123456789xyz"
REQ = ModelRequest([{"role": "user", "content": "hi"}])


def echo_credentials(request: httpx.Request) -> str:
    """Everything credential-like the request carried, the way a hostile server echoes it."""
    seen = [request.headers.get(h, "") for h in ("authorization", "x-api-key")]
    seen += [v for _, v in request.url.params.multi_items()]
    seen.append(str(request.url))
    return " ".join(s for s in seen if s)


class EchoServer:
    """500 echoing the key (retried), then 401 echoing it in a 'bad key' reply (whole
    calls), or a stream whose text and raw chunks repeat it; cancellation stalls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        echo = echo_credentials(request)
        body = json.loads(request.content)
        if self.calls == 1:
            return httpx.Response(500, json={"error": {"message": f"bad key {echo}"}})
        if "cancel me" in json.dumps(body):
            await asyncio.sleep(30)
        if body.get("stream"):
            chunks = [
                {"choices": [{"index": 0, "delta": {"content": f"you sent {echo}"}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=sse(*chunks)
            )
        if self.calls == 2:
            return httpx.Response(401, text=f"Incorrect API key provided: {echo}")
        return httpx.Response(200, json=completion({"role": "assistant", "content": echo}))


WAYS = {
    "argument": lambda m: {"api_key": KEY},
    "argument-newline": lambda m: {"api_key": KEY + "\n"},
    "environment": lambda m: m.setenv("OPENAI_API_KEY", KEY + "\r\n") or {},
    "header": lambda m: {"profile": "generic", "headers": {"X-Api-Key": KEY}},
    "query-apikey": lambda m: {"profile": "generic", "query": {"apikey": KEY}},
    "query-API_KEY": lambda m: {"profile": "generic", "query": {"API_KEY": KEY}},
    "query-Api-Key": lambda m: {"profile": "generic", "query": {"Api-Key": KEY}},
    "url-userinfo": lambda m: {"profile": "generic", "base_url": f"https://me:{KEY}@h.test/v1"},
    "url-query": lambda m: {"profile": "generic", "base_url": f"https://h.test/v1?key={KEY}"},
}


def forms() -> list[str]:
    from urllib.parse import quote

    return [KEY, repr(KEY)[1:-1], quote(KEY, safe=""), KEY[4:20]]


@pytest.mark.parametrize("way", sorted(WAYS))
async def test_key_leaks_nowhere_in_any_artefact_of_a_run(way, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    options = {
        "base_url": "https://api.openai.com/v1",
        "profile": "openai",
        **WAYS[way](monkeypatch),
    }
    server = EchoServer()
    texts: list[str] = []
    for stream in (False, True):
        server.calls = 0
        model = OpenAIModel(
            "gpt-test", stream=stream, transport=httpx.MockTransport(server),
            retry=RetryPolicy(attempts=2, sleep=Recorder()), **options,
        )  # fmt: skip
        cassette = tmp_path / f"cassette-{stream}.jsonl"
        recording = record(model, cassette)
        texts += [repr(model), repr(vars(model)), repr(recording)]
        session = an.Session(id=f"s-{stream}", store=an.SQLiteStore(tmp_path / "store.db"))
        agent = an.Agent("x", [], model=recording, max_iterations=2)
        if not stream:  # retried 500, then a 401 that echoes the key: a typed failure
            with pytest.raises(ModelHTTPError) as info:
                await agent.run("hi", session=session)
            texts += [str(info.value), repr(info.value), info.value.body]
        result = await agent.run("hi again", session=session)
        texts += [repr(e) for e in result.events] + [str(e.fields()) for e in result.events]
        texts += [result.output or "", repr(result), json.dumps(session.to_openai())]
        result.trace.save(tmp_path / f"trace-{stream}.jsonl")
        session.store.export_jsonl(session.id, tmp_path / f"export-{stream}.jsonl")
        texts += [json.dumps(session._repr_mimebundle_(), ensure_ascii=False)]
        texts += [payload.unpack(payload.pack({"messages": session.to_openai()})).__repr__()]
        # a cancelled run: the stop is recorded, the key is not
        cancelled = agent.start("cancel me", session=session)
        asked = server.calls
        task = asyncio.ensure_future(cancelled.finish())
        await eventually(lambda n=asked: server.calls > n)  # the model call is in flight
        cancelled.cancel()
        stopped = await task
        texts += [repr(e) for e in stopped.events]
        assert server.calls >= 2
    for path in tmp_path.iterdir():  # cassettes, traces, exports, the SQLite file and its WAL
        texts.append(path.read_bytes().decode("utf-8", "replace"))
    everything = "\n".join(texts)
    found = [f for f in forms() if f in everything]
    assert not found, f"{way}: {found} found"
    assert "***" in everything


@pytest.mark.parametrize("key", ["sk-\u00e9t\u00e9-0123456789", "sk-tab\there-0123456789"])
def test_key_non_ascii_is_a_configuration_error_that_never_shows_it(key):
    with pytest.raises(ConfigurationError) as info:
        OpenAIModel("m", api_key=key, profile="openai")
    assert key not in str(info.value) and key[3:8] not in str(info.value)
    assert "position" in str(info.value)


def test_key_with_a_trailing_newline_is_stripped_before_it_is_sent():
    sent = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers["authorization"])
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    model = OpenAIModel("m", api_key=f"  {KEY}\n", transport=httpx.MockTransport(handler))
    asyncio.run(model.complete(REQ))
    assert sent == [f"Bearer {KEY}"]


async def test_key_in_headers_argument_is_masked_in_errors_and_raw_replies():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, text=f"forbidden: {request.headers['x-goog-api-key']}")

    model = OpenAIModel(
        "m", profile="generic", headers={"x-goog-api-key": KEY}, base_url="https://h.test/v1",
        transport=httpx.MockTransport(handler), retry=RetryPolicy(attempts=1),
    )  # fmt: skip
    with pytest.raises(ModelHTTPError) as info:
        await model.complete(REQ)
    assert KEY not in str(info.value) and "***" in str(info.value)


def test_key_cassette_query_spellings_are_one_case_insensitive_list(tmp_path: Path):
    from agentnb._secrets import is_secret_name, public_url

    for name in ("apikey", "API_KEY", "Api-Key", "key", "access_token", "x-api-key", "token"):
        assert is_secret_name(name), name
        assert KEY not in public_url(f"https://h.test/v1?{name}={KEY}")
    assert not is_secret_name("api-version") and not is_secret_name("model")


def test_key_in_a_header_with_a_newline_is_stripped_and_a_bad_header_is_typed():
    model = OpenAIModel("m", profile="generic", headers={"api-key": KEY + "\n"})
    assert model.secrets.auth == {"api-key": KEY} and model.headers == {"api-key": "***"}
    with pytest.raises(ConfigurationError, match="'X-Note' is not printable ASCII"):
        OpenAIModel("m", profile="generic", headers={"X-Note": "caf\u00e9"})


def _pieces(text: str, size: int) -> list[dict]:
    chunks = [{"choices": [{"index": 0, "delta": {"content": text[i : i + size]}}]}
              for i in range(0, len(text), size)]  # fmt: skip
    return [*chunks, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]


@pytest.mark.parametrize("size", [1, 3, 7])
async def test_key_streamed_back_in_pieces_is_in_no_piece_the_client_keeps(tmp_path, size):
    """A server echoing the key a few characters per chunk: each chunk was masked alone, so
    the reply, its events and the cassette held the key in pieces, whole once joined (H5)."""
    from agentnb.models.masking import carried_text
    from agentnb.models.sse import SSEFramer

    body = sse(*_pieces(f"you sent {KEY}, fine", size))
    answer = lambda request: httpx.Response(  # noqa: E731
        200, headers={"content-type": "text/event-stream"}, content=body
    )
    model = OpenAIModel(
        "gpt-test", api_key=KEY, stream=True, base_url="https://api.openai.com/v1",
        transport=httpx.MockTransport(answer),
    )  # fmt: skip
    recording = record(model, tmp_path / "cassette.jsonl")
    deltas = [d async for d in recording.stream(REQ)]
    assert "".join(d.text for d in deltas) == "you sent ***, fine"
    raws = "".join(d.raw or "" for d in deltas)
    framer = SSEFramer()
    joined = carried_text(framer.feed(raws.replace("}{", "}\n\n{").encode()))
    assert KEY not in "".join(d.text for d in deltas) + raws + joined
    stored = json.loads((tmp_path / "cassette.jsonl").read_text(encoding="utf-8"))
    framer = SSEFramer()
    assert KEY not in carried_text(framer.feed(stored["response"]["body"].encode()))
    replayed = an.models.Cassette(tmp_path / "cassette.jsonl").replay(stream=True)
    assert "".join([d.text async for d in replayed.stream(REQ)]) == "you sent ***, fine"
