"""Wire helpers of OpenAIModel: reading a whole completion, and bounding what a server sends.

Every byte a server sends is counted after decompression (a gzip bomb is counted as what it
expands to): whole replies and streams stop at ``max_response_bytes`` with a
:class:`~agentnb.errors.ModelResponseError`, error bodies are read only as far as a message
shows them (:data:`MAX_ERROR_BYTES`), and a stream ends at its deadline (:func:`bounded`).
Credentials are masked by :mod:`~agentnb._secrets`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import httpx

from ..._secrets import public_url, url_secrets
from ...errors import ModelResponseError, ModelStreamError
from ..base import Delta, ModelResponse, coerce_response

__all__ = [
    "MAX_ERROR_BYTES",
    "MAX_RESPONSE_BYTES",
    "bounded",
    "load_json",
    "parse_completion",
    "public_url",
    "read_limited",
    "sse_bytes",
    "url_secrets",
]

#: The default bound on one reply (whole or streamed), in bytes after decompression.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
#: How much of an error body is read (a message shows its first 500 characters).
MAX_ERROR_BYTES = 64 * 1024
#: How long a stream that already has its finish_reason may wait for ``[DONE]``.
DONE_GRACE = 1.0
_BREAK = re.compile(r"\r\n|\r|\n")

_MESSAGE_KEYS = ("role", "content", "tool_calls", "refusal", "reasoning_content", "name")


def load_json(text: str, what: str) -> Any:
    """``json.loads``, but JSON nested too deeply is a ModelResponseError, not RecursionError.
    Invalid JSON still raises ``json.JSONDecodeError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ModelResponseError(f"{what} is JSON nested too deeply to read") from None


def too_large(what: str, limit: int) -> ModelResponseError:
    return ModelResponseError(
        f"{what}: the reply is larger than max_response_bytes={limit:,} bytes (counted after "
        "decompression); it was not read further"
    )


async def read_limited(
    response: httpx.Response, limit: int, what: str, *, cut: bool = False
) -> bytes:
    """The decoded body, at most ``limit`` bytes: past it a ModelResponseError, or with
    ``cut`` the first ``limit`` bytes (for error bodies, shown only in part)."""
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            if not cut:
                raise too_large(what, limit)
            parts.append(chunk[: len(chunk) - (size - limit)])
            break
        parts.append(chunk)
    return b"".join(parts)


async def sse_bytes(response: httpx.Response, limit: int, what: str) -> AsyncIterator[bytes]:
    """The bytes of an event stream as they come, at most ``limit`` decoded bytes in all
    (so any one event too); framed by :class:`agentnb.models.sse.SSEFramer`."""
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise too_large(what, limit)
        yield chunk


async def bounded(
    deltas: AsyncIterator[Delta],
    deadline: float,
    what: str,
    settled: Callable[[], bool] = lambda: False,
) -> AsyncIterator[Delta]:
    """``deltas`` until ``deadline`` (the loop's clock): past it a ModelStreamError, unless
    ``settled()`` says the reply is complete (a finish_reason came), which then waits only
    :data:`DONE_GRACE` seconds more for ``[DONE]`` and ends cleanly without it."""
    loop = asyncio.get_running_loop()
    iterator = aiter(deltas)
    try:
        while True:
            done = settled()
            remaining = deadline - loop.time()
            wait = min(remaining, DONE_GRACE) if done else remaining
            try:
                async with asyncio.timeout(max(0.0, wait)):
                    delta = await anext(iterator)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if done:
                    return
                raise ModelStreamError(f"{what}: the stream did not finish in time") from None
            yield delta
    finally:
        closer = getattr(iterator, "aclose", None)
        if closer is not None:
            await closer()


def parse_completion(data: dict[str, Any], model: str | None = None) -> ModelResponse:
    """A Chat Completions body → ModelResponse, tolerating the common deviations."""
    if "error" in data and "choices" not in data:
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ModelResponseError(f"the server answered with an error: {message}")
    repairs: list[str] = []
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ModelResponseError(
            f"the completion has no choices[0].message; got keys {sorted(map(str, data))}"
        ) from None
    if not isinstance(message, dict):
        kind = "null" if message is None else f"a {type(message).__name__}, not an object"
        raise ModelResponseError(f"the reply's choices[0].message is {kind}")
    clean = {k: message[k] for k in _MESSAGE_KEYS if message.get(k) is not None}
    clean["role"] = "assistant"
    calls = []
    if not isinstance(clean.get("tool_calls") or [], list):
        raise ModelResponseError("the reply's choices[0].message.tool_calls is not a list")
    for i, call in enumerate(clean.get("tool_calls") or ()):
        if not isinstance(call, dict) or not isinstance(call.get("function") or {}, dict):
            raise ModelResponseError(
                f"the reply's choices[0].message.tool_calls[{i}] is not an object with a "
                "function object"
            )
        function = dict(call.get("function") or {})
        if isinstance(function.get("arguments"), dict | list):
            function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
            repairs.append(f"tool call {i} had arguments as a JSON object; serialised to a string")
        function.setdefault("arguments", "")
        calls.append({"id": call.get("id") or "", "type": "function", "function": function})
    if calls:
        clean["tool_calls"] = calls
    else:
        clean.pop("tool_calls", None)
    body = {**data, "choices": [{**choice, "message": clean}]}
    response = coerce_response(body, model)
    return replace(response, raw=data, repairs=tuple(repairs))
