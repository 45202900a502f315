"""Wire helpers of OpenAIModel: reading a whole completion, bounding a stream, hiding a key
(also one written into the URL: userinfo and ``api_key``/``key``/``token`` parameters)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from ...errors import ModelResponseError, ModelStreamError
from ..base import Delta, ModelResponse, coerce_response

__all__ = ["Secret", "bounded", "load_json", "parse_completion", "public_url", "url_secrets"]

#: Query parameters whose values are credentials (compared lower-case, ``-`` as ``_``).
SECRET_PARAMS = frozenset({"api_key", "key", "token", "access_token", "apikey"})

_MESSAGE_KEYS = ("role", "content", "tool_calls", "refusal", "reasoning_content", "name")


class Secret:
    """Holds the API key (and ``also``: credentials from the URL); shows as ``***``."""

    __slots__ = ("also", "value")

    def __init__(self, value: str | None, also: tuple[str, ...] = ()) -> None:
        self.value = value
        self.also = also

    @property
    def all(self) -> tuple[str, ...]:
        """Every secret to mask in text shown to people."""
        return tuple(s for s in (self.value, *self.also) if s)

    def __repr__(self) -> str:
        return "***" if self.value else "None"


def _secret_param(name: str) -> bool:
    return name.lower().replace("-", "_") in SECRET_PARAMS


def public_url(url: str) -> str:
    """``url`` safe to show: userinfo and credential query parameters become ``***``."""
    parts = urlsplit(url)
    netloc, query = parts.netloc, parts.query
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_secret_param(k) for k, _ in pairs):
            shown = [(k, "***" if _secret_param(k) else v) for k, v in pairs]
            query = urlencode(shown, safe="*")
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def url_secrets(url: str, query: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The credentials written into ``url`` (user, password, key parameters) and ``query``."""
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:  # user:password, or a bare token; a user name alone is no secret
        userinfo = parts.netloc.rpartition("@")[0]
        for piece in (userinfo, userinfo.partition(":")[2] if ":" in userinfo else userinfo):
            found += [piece, unquote(piece)]
    pairs = [*parse_qsl(parts.query, keep_blank_values=True), *(query or {}).items()]
    found += [str(v) for k, v in pairs if _secret_param(str(k))]
    return tuple(dict.fromkeys(s for s in found if s))


def load_json(text: str, what: str) -> Any:
    """``json.loads``, but JSON nested too deeply is a ModelResponseError, not RecursionError.
    Invalid JSON still raises ``json.JSONDecodeError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ModelResponseError(f"{what} is JSON nested too deeply to read") from None


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
