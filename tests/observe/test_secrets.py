"""The one secrets rule through the proxy (issue 23; issue 27 H2): whatever header, query
parameter or echo carries the app's key, nothing the proxy keeps, records, exports or saves
holds it. The app still gets every byte the upstream sent, key included."""

from __future__ import annotations

import json

import httpx
import pytest

import agentnb as an
from agentnb.session.bus import add_observer
from tests.observe.observe_helpers import KEY
from tests.servers.fault_server import Step, text_chunks

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
        "events": json.dumps([e.to_dict() for e in events], ensure_ascii=False, default=str)
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
        answer = httpx.post(f"{proxy.base_url}/chat/completions", json=body,
                            headers={header: value})  # fmt: skip
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
        with httpx.stream("POST", f"{proxy.base_url}/chat/completions?api-key={KEY}&v=2",
                          json=body) as answer:  # fmt: skip
            text = answer.read().decode()
        assert KEY in text
        assert fault_server.requests[0]["path"].endswith(f"?api-key={KEY}&v=2")
        found = artefacts(proxy, kept.events, tmp_path)
        (session,) = proxy.sessions
        assert session.to_openai()[-1]["content"] == "your key is *** ok"
    assert leaks(found) == []
