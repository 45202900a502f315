"""The OpenAI client encodes each message's JSON once (issue 26): a request's body is what
encoding the whole body would give, byte for byte, and a long session's next request encodes
only its new messages."""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest

import agentnb as an
from agentnb import _json
from agentnb.models import OpenAIModel
from agentnb.models.openai import client as client_module
from agentnb.models.openai.profiles import PROFILES
from tests.helpers import call, calls

HOSTILE = "北京\u2028第二行\u2029\ud800 end \x00"


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": None}


def replies_with(sent: list[bytes], replies: list[dict[str, Any]]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        body = _json.dumps(completion(replies.pop(0))).encode()  # lone surrogates escaped
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    return httpx.MockTransport(handler)


def expected(model: OpenAIModel, request: an.models.ModelRequest) -> bytes:
    """The body as the client built it before: a deep copy, prepared in place, encoded whole."""
    body: dict[str, Any] = {"model": model.model, **model.params}
    body.update(request.to_openai())
    body["model"] = model.model
    body, _ = model.profile.prepare(copy.deepcopy(body), stream=False)
    return _json.dumps(body, separators=(",", ":")).encode()


@pytest.mark.parametrize("profile", ["openai", "llama-cpp-python", "generic"])
def test_the_body_is_the_whole_encoding_byte_for_byte(profile: str):
    @an.tool
    def lookup(city: str) -> str:
        """Weather."""
        return HOSTILE

    sent: list[bytes] = []
    replies = [
        calls(call("c1", "lookup", city=HOSTILE)),
        {"role": "assistant", "content": None, "reasoning_content": "想想",
         "tool_calls": [call("c2", "lookup", city="上海")]},
        {"role": "assistant", "content": "好的 " + HOSTILE},
    ]  # fmt: skip
    model = OpenAIModel(
        "m", base_url="http://test/v1", api_key="k", profile=profile,
        transport=replies_with(sent, replies), params={"temperature": 0},
    )  # fmt: skip
    agent = an.Agent("说中文 " + HOSTILE, [lookup], model=FunctionSpy(model))
    result = agent.run_sync("天气 " + HOSTILE)
    assert result.stop_reason == "final_answer"
    requests = [record.request for record in result.session.requests]
    assert len(sent) == len(requests) == 3
    for content, request in zip(sent, requests, strict=True):
        assert content == expected(model, request)
        assert json.loads(content)["messages"] == json.loads(expected(model, request))["messages"]


class FunctionSpy(an.models.Model):
    """Passes the call on; the model under test stays the one whose body is checked."""

    def __init__(self, inner: OpenAIModel) -> None:
        self.inner, self.name = inner, inner.name

    async def complete(self, request: Any) -> Any:
        return await self.inner.complete(request)


def test_a_long_sessions_next_request_encodes_only_its_new_messages(monkeypatch):
    sent: list[bytes] = []
    replies = [{"role": "assistant", "content": f"答 {i}"} for i in range(3)]
    model = OpenAIModel("m", base_url="http://test/v1", api_key="k", profile="openai",
                        transport=replies_with(sent, replies))  # fmt: skip
    history = [{"role": ("user", "assistant")[i % 2], "content": f"第 {i} 条"} for i in range(2000)]
    session = an.Session(history)
    agent = an.Agent("你好", model=model)
    agent.run_sync("第一个问题", session=session)
    encoded: list[Any] = []
    real = client_module._json.dumps

    def counting(value: Any, **options: Any) -> str:
        encoded.append(value)
        return real(value, **options)

    monkeypatch.setattr(client_module._json, "dumps", counting)
    agent.run_sync("第二个问题", session=session)
    messages = [v for v in encoded if isinstance(v, dict) and "role" in v]
    assert len(messages) == 2  # the new question and the answer before it; not 2,003
    assert len(sent) == 2 and json.loads(sent[1])["messages"][-1]["content"] == "第二个问题"


def test_profile_messages_are_prepared_without_touching_the_shared_wire():
    wire = {"role": "assistant", "content": None, "reasoning_content": "r",
            "tool_calls": [call("c", "f")]}  # fmt: skip
    before = copy.deepcopy(wire)
    llama = PROFILES["llama-cpp-python"]
    prepared = llama.message(wire)
    assert (
        prepared is not wire and prepared["content"] == "" and "reasoning_content" not in prepared
    )
    assert wire == before
    plain = {"role": "user", "content": "hi"}
    assert PROFILES["openai"].message(plain) is plain
