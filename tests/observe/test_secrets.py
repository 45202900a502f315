"""The one secrets rule through the proxy (issue 23; issue 27 H2): whatever header, query
parameter or echo carries the app's key, nothing the proxy keeps, records, exports or saves
holds it. The app still gets every byte the upstream sent, key included."""

from __future__ import annotations

import asyncio
import base64
import json
import logging

import httpx
import pytest

import agentnb as an
from agentnb.session.bus import add_observer
from agentnb.storage.codec import event_to_dict
from tests.observe.observe_helpers import KEY
from tests.servers.fault_server import Step, completion, text_chunks

#: Header spellings apps and gateways send a key in (OpenAI, Azure, Anthropic, Google,
#: Azure APIM, Portkey, Helicone, Cloudflare AI Gateway, a bare token header).
HEADERS = [
    ("authorization", f"Bearer {KEY}"),
    ("api-key", KEY),
    ("x-api-key", KEY),
    ("x-goog-api-key", KEY),
    ("openai-api-key", KEY),
    ("ocp-apim-subscription-key", KEY),
    ("x-portkey-api-key", KEY),
    ("helicone-auth", f"Bearer {KEY}"),
    ("cf-aig-authorization", f"Bearer {KEY}"),
]


class Kept:
    """Every event of every session while it is open (a process-wide observer)."""

    def __init__(self):
        self.events = []

    def __enter__(self):
        self._remove = add_observer(self.events.append)
        return self

    def __exit__(self, *exc):
        self._remove()


def artefacts(proxy, events, tmp_path) -> dict[str, str]:
    """Everything the proxy keeps or writes, as text to search."""
    sessions = proxy.sessions
    trace = an.Trace(list(events)).save(tmp_path / "events.jsonl")
    store = an.SQLiteStore(tmp_path / "sessions.db")
    for session in sessions:
        store.commit(session.id, 0, session.wire())
    return {
        "calls": repr(proxy.calls) + json.dumps([vars(c) for c in proxy.calls], default=str),
        "sessions": json.dumps([s.to_openai() for s in sessions], ensure_ascii=False)
        + repr(sessions),
        "requests": json.dumps(
            [r.request.messages for s in sessions for r in s.requests], ensure_ascii=False
        ),
        "events": json.dumps([event_to_dict(e) for e in events], ensure_ascii=False, default=str)
        + repr(events),
        "trace": trace.read_text(encoding="utf-8"),
        "store": (tmp_path / "sessions.db").read_bytes().decode("utf-8", "replace"),
        "cassette": proxy.save_cassette(tmp_path / "proxied.jsonl").read_text(encoding="utf-8"),
        "proxy": repr(proxy),
    }


def leaks(found: dict[str, str]) -> list[str]:
    return [name for name, text in found.items() if KEY in text]


@pytest.mark.parametrize(("header", "value"), HEADERS, ids=[h for h, _ in HEADERS])
def test_a_key_in_any_header_echoed_in_a_401_is_kept_nowhere(fault_server, tmp_path, header, value):
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_key"}}
    fault_server.script(Step(status=401, body=echo))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with Kept() as kept, an.observe.proxy(upstream=fault_server.base_url) as proxy:
        answer = httpx.post(
            f"{proxy.base_url}/chat/completions", json=body, headers={header: value}
        )
        assert answer.status_code == 401 and KEY in answer.text  # the app's bytes, unchanged
        assert fault_server.requests[0]["headers"][header] == value  # forwarded
        found = artefacts(proxy, kept.events, tmp_path)
    assert proxy.calls[0].error and "***" in proxy.calls[0].error
    assert leaks(found) == []


def test_a_key_in_the_query_string_or_echoed_in_a_stream_is_kept_nowhere(fault_server, tmp_path):
    chunks = text_chunks("your key is ", KEY, " ok")
    fault_server.script(Step(chunks=chunks))
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with Kept() as kept, an.observe.proxy(upstream=fault_server.base_url) as proxy:
        with httpx.stream(
            "POST", f"{proxy.base_url}/chat/completions?api-key={KEY}&v=2", json=body
        ) as answer:
            text = answer.read().decode()
        assert KEY in text
        assert fault_server.requests[0]["path"].endswith(f"?api-key={KEY}&v=2")
        found = artefacts(proxy, kept.events, tmp_path)
        (session,) = proxy.sessions
        assert session.to_openai()[-1]["content"] == "your key is *** ok"
    assert leaks(found) == []


# -- issue 27's acceptance: 12 spellings, every artefact ----------------------------------------
BASIC = base64.b64encode(f"user:{KEY}".encode()).decode()
#: (headers, query) each spelling sends: the 9 header names, Basic auth, two query parameters.
SPELLINGS = [({name: value}, {}) for name, value in HEADERS] + [
    ({"authorization": f"Basic {BASIC}"}, {}),
    ({}, {"api-key": KEY}),
    ({}, {"key": KEY}),
]


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.mark.parametrize(
    ("headers", "query"),
    SPELLINGS,
    ids=[next(iter(h or q)) + ("-basic" if "Basic" in str(h) else "") for h, q in SPELLINGS],
)
def test_a_key_in_twelve_spellings_is_in_no_artefact(fault_server, tmp_path, headers, query):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    echo = f"your key is {KEY}"
    fault_server.script(
        Step(status=401, body={"error": {"message": f"Incorrect API key provided: {KEY}."}}),
        Step(chunks=text_chunks("your key is ", KEY[:9], KEY[9:])),
        Step(body=completion({"role": "assistant", "content": echo})),
    )
    spans, logs = InMemorySpanExporter(), _Records()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    instrumentation = an.observe.instrument(provider, content=True)
    an.log("trace", handler=logs)
    errors: list[str] = []
    try:
        with Kept() as kept, an.observe.proxy(upstream=fault_server.base_url) as proxy:
            url = f"{proxy.base_url}/chat/completions"
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            assert httpx.post(url, json=body, headers=headers, params=query).status_code == 401
            with httpx.stream(
                "POST", url, json={**body, "stream": True}, headers=headers, params=query
            ) as answer:
                assert KEY[9:] in answer.read().decode()
            # an agentnb agent through the proxy, its model given the key the same way
            model = an.models.OpenAIModel(
                "m", base_url=proxy.base_url, profile="generic", headers=headers, query=query
            )
            agent = an.Agent("t", [], model=model)
            result = agent.run_sync("hi")
            evaluation = asyncio.run(an.evaluate({"a": agent}, ["hi"], progress=False))
            saved = evaluation.save(tmp_path / "evaluation.jsonl")
            fault_server.script(Step(status=401, body={"error": {"message": f"bad {KEY}"}}))
            try:
                agent.run_sync("again")
            except an.AgentnbError as exc:
                errors.append(f"{exc!r} {exc}")
            found = artefacts(proxy, kept.events, tmp_path)
    finally:
        an.log(None)
        logging.getLogger("agentnb").removeHandler(logs)
        instrumentation.uninstrument()
    formatter = logging.Formatter("%(message)s %(session_id)s %(exception)s %(raw_output)s")
    found["logs"] = "\n".join(
        formatter.format(r) if hasattr(r, "exception") else r.getMessage() for r in logs.records
    ) + json.dumps([r.__dict__ for r in logs.records], default=str, ensure_ascii=False)
    found["spans"] = json.dumps(
        [dict(s.attributes) | {"name": s.name} for s in spans.get_finished_spans()],
        ensure_ascii=False,
    )
    paths = [saved] if saved.is_file() else [p for p in saved.rglob("*") if p.is_file()]
    found["evaluation"] = "".join(p.read_text(encoding="utf-8") for p in paths)
    found["run"] = result.trace.to_jsonl() + repr(result) + json.dumps(result.session.to_openai())
    found["errors"] = " ".join(errors)
    assert errors and logs.records and spans.get_finished_spans()
    assert "***" in found["sessions"]  # the echo was there, masked
    assert leaks(found) == []


# -- a key streamed back in pieces (issue 37 H5) -------------------------------------------------
#: A request in each wire format, streamed, the key in the header the format's SDK sends it in.
STREAMED = {
    "chat": ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}]},
             {"authorization": f"Bearer {KEY}"}),
    "responses": ("/responses", {"input": "hi"}, {"authorization": f"Bearer {KEY}"}),
    "anthropic": ("/messages", {"max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]},
                  {"x-api-key": KEY}),
}  # fmt: skip


def carried(stream: str) -> str:
    """Every string value of every event of ``stream``, joined per JSON path: the text the
    stream carries across events, as a client reassembles it."""
    from agentnb.models.masking import carried_text
    from agentnb.models.sse import SSEFramer

    framer = SSEFramer()
    events = framer.feed(stream.encode()) + framer.close()
    return carried_text(events)


@pytest.mark.parametrize("api", list(STREAMED))
def test_a_key_streamed_back_in_pieces_is_kept_in_no_piece(tmp_path, api):
    """An upstream echoing the key split across events: each event was masked alone, so the
    call, the cassette and its replay kept the pieces, and the pieces joined are the key
    (H5). Masking follows the text a stream carries across events, in every format."""
    path, body, headers = STREAMED[api]
    echo = an.models.FunctionModel(lambda r: f"your key is {KEY}, keep it", name="echo")
    with (
        an.observe.serve(echo) as upstream,
        Kept() as kept,
        an.observe.proxy(upstream=upstream.base_url) as proxy,
    ):
        url = f"{proxy.base_url}{path}"
        with httpx.stream(
            "POST", url, json={"model": "m", "stream": True, **body}, headers=headers
        ) as answer:
            sent = answer.read().decode()
        found = artefacts(proxy, kept.events, tmp_path)
    assert KEY in carried(sent)  # the app got every byte, the key in pieces
    (call,) = proxy.calls
    assert call.ok and call.stream, call.error
    found["carried"] = carried(call.response)
    cassette = (tmp_path / "proxied.jsonl").read_text(encoding="utf-8")
    found["cassette carried"] = "".join(
        carried(json.loads(line)["response"]["body"]) for line in cassette.splitlines()
    )
    (session,) = proxy.sessions
    assert "your key is ***, keep it" in json.dumps(session.to_openai(), ensure_ascii=False)
    assert leaks(found) == []
    if api == "chat":  # the cassette replayed offline, whole and streamed: no key in either
        request = session.requests[0].request
        whole = an.models.Cassette(tmp_path / "proxied.jsonl").replay(stream=False)
        assert KEY not in asyncio.run(whole.complete(request)).message.text

        async def streamed():
            model = an.models.Cassette(tmp_path / "proxied.jsonl").replay(stream=True)
            return "".join([d.text async for d in model.stream(request)])

        replayed = asyncio.run(streamed())
        assert replayed == "your key is ***, keep it"


COOKIE = "sessionid=ck-SESSION-0123456789abcdef; csrftoken=tok-CSRF-9876543210"


@pytest.mark.parametrize(
    ("headers", "secret"),
    [
        ({"cookie": COOKIE}, "ck-SESSION-0123456789abcdef"),
        ({"cookie": COOKIE}, "tok-CSRF-9876543210"),
        ({"authorization": f"Bearer\t{KEY}"}, KEY),
        ({"authorization": f"Bearer   {KEY}"}, KEY),
        ({"x-auth-token": f"Token\t \t{KEY}"}, KEY),
    ],
    ids=["cookie-session", "cookie-csrf", "bearer-tab", "bearer-spaces", "token-tabs"],
)
def test_a_credential_in_a_cookie_or_however_spaced_is_masked(
    fault_server, tmp_path, headers, secret
):
    """A credential in a Cookie header, or after a tab in Authorization ('Bearer\\t<key>'),
    was forwarded and kept unmasked when the upstream echoed it (H6): every value a
    credential-named header or cookie carries is registered, however spaced."""
    echo = f"you sent {secret}"
    fault_server.script(Step(body=completion({"role": "assistant", "content": echo})))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with Kept() as kept, an.observe.proxy(upstream=fault_server.base_url) as proxy:
        answer = httpx.post(f"{proxy.base_url}/chat/completions", json=body, headers=headers)
        assert secret in answer.text  # the app's bytes, unchanged
        found = artefacts(proxy, kept.events, tmp_path)
    assert proxy.calls[0].ok and "you sent ***" in proxy.calls[0].response
    assert [name for name, text in found.items() if secret in text] == []
