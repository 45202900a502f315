"""Wire helpers of OpenAIModel: reading a whole completion, bounding a stream, hiding a key."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from ..errors import ModelResponseError, ModelStreamError
from .base import Delta, ModelResponse, coerce_response

__all__ = ["Secret", "bounded", "parse_completion"]

_MESSAGE_KEYS = ("role", "content", "tool_calls", "refusal", "reasoning_content", "name")


class Secret:
    """Holds the API key; shows as ``***`` everywhere."""

    __slots__ = ("value",)

    def __init__(self, value: str | None) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "***" if self.value else "None"


async def bounded(deltas: AsyncIterator[Delta], deadline: float, what: str) -> AsyncIterator[Delta]:
    """``deltas``, failing with ModelStreamError once ``deadline`` passes (a slow drip)."""
    iterator = aiter(deltas)
    try:
        while True:
            remaining = deadline - time.monotonic()
            try:
                async with asyncio.timeout(max(0.0, remaining)):
                    delta = await anext(iterator)
            except StopAsyncIteration:
                return
            except TimeoutError:
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
            f"the completion has no choices[0].message; got keys {sorted(data)}"
        ) from None
    clean = {k: message[k] for k in _MESSAGE_KEYS if message.get(k) is not None}
    clean["role"] = "assistant"
    calls = []
    for i, call in enumerate(clean.get("tool_calls") or ()):
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
