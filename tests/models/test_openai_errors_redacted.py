"""A hostile tester's breaks of OpenAIModel: keys leaking through stream errors and URLs,
and malformed 200 replies ending as bare AttributeError/RecursionError/ValueError."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

import agentnb as an
from agentnb.errors import ModelHTTPError, ModelResponseError, ModelStreamError
from agentnb.models import ModelRequest, Usage
from agentnb.models.openai.retry import RetryPolicy
from tests.models.openai_helpers import KEY, Body, completion, model_for, sse

REQ = ModelRequest([{"role": "user", "content": "hi"}])


def streaming(*parts: bytes, **kw: Any):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Body(list(parts))
        )

    return model_for(handler, stream=True, **kw)


def whole(body: Any, **kw: Any):
    text = body if isinstance(body, str) else json.dumps(body)
    return model_for(lambda r: httpx.Response(200, text=text), **kw)


def assert_no_key(exc: ModelStreamError, tmp_path: Path) -> None:
    assert KEY not in str(exc)
    assert KEY not in repr(exc.result.events)
    exc.result.trace.save(tmp_path / "run.jsonl")
    assert KEY not in (tmp_path / "run.jsonl").read_text()


# -- 1. the key in stream content ---------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}),
        json.dumps({"error": f"bad key {KEY}"}),
        "{" + KEY,
    ],
    ids=["error-object", "error-string", "garbage-chunk"],
)
async def test_api_key_in_a_stream_error_is_redacted(payload, tmp_path):
    model = streaming(f"data: {payload}\n\n".encode())
    with pytest.raises(ModelStreamError) as info:
        await an.Agent("x", [], model=model).run("hi")
    assert "***" in str(info.value)
    assert_no_key(info.value, tmp_path)


async def test_api_key_in_a_raw_stream_chunk_is_redacted(tmp_path):
    chunk = {"choices": [{"index": 0, "delta": {"content": f"echo {KEY}"}}]}
    model = streaming(sse(chunk, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    deltas = [d async for d in model.stream(REQ)]
    assert all(KEY not in (d.raw or "") for d in deltas)
    assert "***" in (deltas[0].raw or "")
    result = await an.Agent("x", [], model=model).run("hi")
    raws = [getattr(e, "raw", None) or "" for e in result.events]
    assert all(KEY not in r for r in raws)


async def test_api_key_in_a_whole_error_reply_is_redacted():
    model = whole({"error": {"message": f"Incorrect API key provided: {KEY}"}})
    with pytest.raises(ModelResponseError) as info:
        await model.complete(REQ)
    assert KEY not in str(info.value)
    model = whole(completion({"role": "assistant", "content": f"echo {KEY}"}))
    reply = await model.complete(REQ)
    assert KEY not in json.dumps(reply.raw)


# -- 2. a key inside the URL --------------------------------------------------------------


URL = "http://user:sk-URL-SECRET-99@host.test/v1?api_key=sk-Q-SECRET-77&api-version=2024"


async def test_api_key_in_the_url_is_redacted():
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text=f"bad credentials for {request.url}")

    model = model_for(refuse, base_url=URL, retry=RetryPolicy(attempts=1))
    shown = repr(model)
    assert "sk-URL-SECRET-99" not in shown and "sk-Q-SECRET-77" not in shown
    assert "host.test" in shown and "api-version=2024" in shown
    with pytest.raises(ModelHTTPError) as info:
        await model.complete(REQ)
    text = f"{info.value} {info.value.body}"
    assert "sk-URL-SECRET-99" not in text and "sk-Q-SECRET-77" not in text
    assert "host.test" in text


async def test_api_key_in_the_url_is_redacted_in_stream_errors():
    model = streaming(b"data: {broken\n\n", base_url=URL)
    with pytest.raises(ModelStreamError) as info:
        [d async for d in model.stream(REQ)]
    assert "sk-URL-SECRET-99" not in str(info.value) and "host.test" in str(info.value)


async def test_api_key_in_the_url_is_redacted_when_no_key_is_configured(monkeypatch):
    from agentnb.models.openai import OpenAIModel

    monkeypatch.delenv("VLLM_API_KEY", raising=False)

    model = OpenAIModel("m", base_url="http://alice:sk-ONLY-URL-1@host.test/v1", profile="vllm")
    assert "sk-ONLY-URL-1" not in repr(model)
    assert model.secrets.values == ("alice:sk-ONLY-URL-1", "sk-ONLY-URL-1")  # not the user name
    token = OpenAIModel("m", base_url="https://tok-ABCDEF@host.test/v1", profile="vllm")
    assert "tok-ABCDEF" not in repr(token) and token.secrets.values == ("tok-ABCDEF",)


# -- 3. malformed 200 replies -------------------------------------------------------------


MALFORMED = {
    "message-null": (
        {"choices": [{"index": 0, "message": None, "finish_reason": "stop"}]},
        "choices[0].message is null",
    ),
    "tool-calls-dict": (
        completion({"role": "assistant", "tool_calls": {"id": "c1"}}),
        "tool_calls is not a list",
    ),
    "tool-call-not-object": (
        completion({"role": "assistant", "tool_calls": ["c1"]}),
        "tool_calls[0] is not an object",
    ),
    "usage-not-a-number": (
        {**completion({"role": "assistant", "content": "ok"}), "usage": {"prompt_tokens": "lots"}},
        "usage.prompt_tokens is not a number",
    ),
    "deep-json": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
async def test_malformed_whole_reply_is_a_readable_response_error(case):
    body, match = MALFORMED[case]
    with pytest.raises(ModelResponseError, match=re.escape(match)):
        await whole(body).complete(REQ)


STREAM_MALFORMED = {
    "usage-not-a-number": (
        json.dumps({"choices": [], "usage": {"prompt_tokens": "lots"}}),
        "usage.prompt_tokens is not a number",
    ),
    "deep-json": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "choices-dict": (json.dumps({"choices": {"0": {}}}), "choices is not a list"),
    "function-string": (
        json.dumps({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]}),
        "tool_calls[0].function is not an object",
    ),
}


@pytest.mark.parametrize("case", list(STREAM_MALFORMED))
async def test_malformed_stream_chunk_is_a_readable_response_error(case):
    payload, match = STREAM_MALFORMED[case]
    model = streaming(f"data: {payload}\n\ndata: [DONE]\n\n".encode())
    with pytest.raises(ModelResponseError, match=re.escape(match)):
        [d async for d in model.stream(REQ)]


def test_usage_from_openai_rejects_non_numbers_readably():
    assert Usage.from_openai({"prompt_tokens": 3, "completion_tokens": "2"}) == Usage(3, 2, 5)
    with pytest.raises(ModelResponseError, match=r"usage\.prompt_tokens is not a number"):
        Usage.from_openai({"prompt_tokens": "lots"})
    with pytest.raises(ModelResponseError, match="usage is not an object"):
        Usage.from_openai("lots")  # type: ignore[arg-type]
