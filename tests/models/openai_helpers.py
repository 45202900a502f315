"""Helpers for OpenAIModel tests: SSE bodies, byte streams that record closing, handlers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from agentnb.models.openai import OpenAIModel
from agentnb.models.openai.retry import RetryPolicy

KEY = "sk-test-SECRET-0123456789"


def sse(*chunks: Any, done: bool = True) -> bytes:
    text = "".join(
        f"data: {c if isinstance(c, str) else json.dumps(c, ensure_ascii=False)}\n\n"
        for c in chunks
    )
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


def completion(message: dict[str, Any], finish: str = "stop", usage: Any = True) -> dict:
    body: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if usage:
        body["usage"] = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    return body


class Recorder:
    """A sleep that records what it was asked to wait, and never waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


class Body(httpx.AsyncByteStream):
    """A response body in given pieces, optionally failing or stalling; records aclose()."""

    def __init__(self, parts: list[bytes], error: Exception | None = None, stall: float = 0):
        self.parts = parts
        self.error = error
        self.stall = stall
        self.closed = False
        self.sent = 0

    async def __aiter__(self):
        for part in self.parts:
            if self.stall:
                await asyncio.sleep(self.stall)
            self.sent += 1
            yield part
        if self.error is not None:
            raise self.error

    async def aclose(self) -> None:
        self.closed = True


def model_for(handler, *, stream: bool = False, profile: str = "openai", **kw: Any) -> OpenAIModel:
    sleep = kw.pop("sleep", None) or Recorder()
    retry = kw.pop("retry", None) or RetryPolicy(sleep=sleep)
    return OpenAIModel(
        kw.pop("model", "gpt-test"),
        base_url=kw.pop("base_url", "https://api.example.test/v1"),
        api_key=kw.pop("api_key", KEY),
        stream=stream,
        profile=profile,
        retry=retry,
        transport=httpx.MockTransport(handler),
        **kw,
    )


def json_of(request: httpx.Request) -> dict[str, Any]:
    return json.loads(request.content)
