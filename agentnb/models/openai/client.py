"""OpenAIModel: any OpenAI-compatible Chat Completions endpoint, over ``httpx.AsyncClient``.

OpenAI, Azure, DeepSeek, Qwen, vLLM, Ollama and llama.cpp servers all speak this protocol,
each with quirks; a compatibility :mod:`profile <agentnb.models.openai.profiles>` (named, or
detected) reshapes requests for them. Replies come whole or as SSE streams
(:mod:`~agentnb.models.openai.sse`); failures are retried
(:mod:`~agentnb.models.openai.retry`) and end as :class:`~agentnb.errors.ModelHTTPError`.
With ``text_actions=True`` a tool call written as text becomes a real one
(:mod:`~agentnb.models.openai.text_actions`).

The API key is read once (argument, else the profile's environment variable) and kept in a
wrapper whose repr is ``***``: it is sent in a header and never appears in a repr, an
event, a trace or an error message (nor does a credential written into ``base_url``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

import httpx

from ...errors import ConfigurationError, ModelHTTPError, ModelResponseError, ModelStreamError
from ..base import Delta, Model, ModelRequest, ModelResponse, split_response
from .profiles import Profile, detect_profile, get_profile, is_loopback
from .retry import RetryPolicy, StatusError, call_with_retries, redact
from .sse import SSEReader
from .text_actions import StreamedText, apply_text_actions
from .wire import Secret, bounded, load_json, parse_completion, public_url, url_secrets

__all__ = ["OpenAIModel"]


class OpenAIModel(Model):
    """A Chat Completions endpoint. ``OpenAIModel("gpt-4o-mini")`` reads ``OPENAI_API_KEY``.

    Args:
        model: the ``model`` field (``OPENAI_MODEL`` when omitted).
        base_url: up to ``/v1`` (``OPENAI_BASE_URL``, else ``https://api.openai.com/v1``).
        api_key: else the profile's variable (``OPENAI_API_KEY``, ``DEEPSEEK_API_KEY``…).
        stream: stream replies as SSE deltas (``ModelDelta`` events).
        profile: a name in ``PROFILES``, a ``Profile``, or ``"auto"`` (from the URL; servers
            on loopback are asked ``GET /models`` once).
        params: request fields sent every time (``temperature``, ``seed``, ``max_tokens``,
            ``tool_choice``…); the agent's ``model_params`` win over them.
        headers, query: extra HTTP headers and query parameters (Azure's ``api-version``).
        timeout: seconds per read/write (httpx); ``total_timeout`` bounds a whole call.
        retry: a :class:`~agentnb.models.openai.retry.RetryPolicy`.
        client: an ``httpx.AsyncClient`` you own (kept open); else ``transport`` (e.g.
            ``httpx.MockTransport``) or the default one, in a client opened per call.
        text_actions: turn tool calls written as text into real calls (profile default).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = False,
        profile: str | Profile = "auto",
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        total_timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        text_actions: bool | None = None,
        name: str | None = None,
    ) -> None:
        env_url = os.environ.get("OPENAI_BASE_URL")
        self.base_url = (base_url or env_url or "https://api.openai.com/v1").rstrip("/")
        self.model = model or os.environ.get("OPENAI_MODEL") or ""
        if not self.model:
            raise ConfigurationError(
                "OpenAIModel needs a model name: OpenAIModel('gpt-4o-mini', ...) or set "
                "OPENAI_MODEL"
            )
        self._auto = profile == "auto"
        chosen = detect_profile(self.base_url) if self._auto else get_profile(profile)
        key = api_key
        if key is None and chosen.key_env:
            key = os.environ.get(chosen.key_env) or None
        if key is None and chosen.name == "generic" and base_url is None and env_url:
            key = os.environ.get("OPENAI_API_KEY") or None  # the pair OPENAI_BASE_URL + KEY
        if key is None and chosen.needs_key:
            raise ConfigurationError(
                f"OpenAIModel for {public_url(self.base_url)} (profile {chosen.name!r}) needs an "
                f"API key: pass api_key=... or set {chosen.key_env}"
            )
        self.query = dict(query or {})
        self._key = Secret(key, also=url_secrets(self.base_url, self.query))
        self._profile = chosen
        self._probed = not (self._auto and chosen.name == "generic" and is_loopback(self.base_url))
        self.text_actions = text_actions
        self.name = name or self.model
        self.streaming = stream
        self.params: dict[str, Any] = dict(params or {})
        self.headers = {str(k): str(v) for k, v in (headers or {}).items()}
        self.timeout = httpx.Timeout(timeout, connect=min(10.0, timeout))
        self.total_timeout = total_timeout
        self.retry = retry or RetryPolicy()
        self._client = client
        self._transport = transport

    # -- configuration -------------------------------------------------------------------

    @property
    def profile(self) -> Profile:
        """The compatibility profile in use (after detection, once a call was made)."""
        return self._profile

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def shown_url(self) -> str:
        """:attr:`url` for messages: credentials written into it are ``***``."""
        return public_url(self.url)

    def _auth_headers(self) -> dict[str, str]:
        key = self._key.value
        if not key:
            return {}
        if self._profile.auth_header == "authorization":
            return {"Authorization": f"Bearer {key}"}
        return {self._profile.auth_header: key}

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._client is not None:
            yield self._client
            return
        async with httpx.AsyncClient(transport=self._transport, timeout=self.timeout) as client:
            yield client

    async def _detect(self, client: httpx.AsyncClient) -> None:
        if self._probed:
            return
        self._probed = True
        try:
            answer = await client.get(
                f"{self.base_url}/models", headers=self._auth_headers(), timeout=5.0
            )
            listing = answer.json() if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            listing = None
        self._profile = detect_profile(
            self.base_url, listing if isinstance(listing, dict) else None
        )

    def _body(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], list[str]]:
        body: dict[str, Any] = {"model": self.model, **self.params}
        body.update(request.to_openai())
        body["model"] = self.model
        body, notes = self._profile.prepare(body, stream=stream)
        return body, [n for n in notes if "not supported" in n]

    def _text_actions_on(self) -> bool:
        return self._profile.text_actions if self.text_actions is None else self.text_actions

    def review(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        """Post-process a whole reply: text actions, when enabled (streams call it too)."""
        if self._text_actions_on() and request.tools and not response.message.tool_calls:
            return apply_text_actions(response, request.tools, str(len(request.messages)))
        return response

    def finish_stream(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        """For the runtime, after it assembled a reply from :meth:`stream`: the repairs in
        words (text actions arrive as tool-call deltas at the end of the stream) and, for an
        action that could not be parsed, the correction."""
        _, notes = self._body(request, stream=True)
        calls = response.message.calls
        if calls and all(c.id.startswith("call_text_") for c in calls):
            names = ", ".join(c.function.name for c in calls)
            notes.append(f"tool call(s) written as text were turned into real calls: {names}")
            response = replace(response, finish_reason="tool_calls")
        else:
            response = self.review(response, request)
        return replace(response, repairs=(*response.repairs, *notes)) if notes else response

    # -- calls ---------------------------------------------------------------------------

    async def _send(self, client: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
        """One attempt: an open streamed response with a 2xx status (the caller closes it)."""
        headers = {**self.headers, **self._auth_headers()}
        if body.get("stream"):
            headers["Accept"] = "text/event-stream"
        req = client.build_request(
            "POST", self.url, json=body, headers=headers, params=self.query, timeout=self.timeout
        )
        response = await client.send(req, stream=True)
        if response.status_code >= 300:
            try:
                raw = await response.aread()
            finally:
                await response.aclose()
            raise StatusError(
                response.status_code, raw.decode("utf-8", "replace"), response.headers
            )
        return response

    async def complete(self, request: ModelRequest) -> ModelResponse:
        async with self._open() as client:
            await self._detect(client)
            body, repairs = self._body(request, stream=False)
            response = await self._complete_body(client, body)
        if repairs:
            response = replace(response, repairs=(*response.repairs, *repairs))
        return self.review(response, request)

    async def _complete_body(
        self, client: httpx.AsyncClient, body: dict[str, Any]
    ) -> ModelResponse:
        async def attempt() -> tuple[str, dict[str, Any] | None]:
            response = await self._send(client, body)
            try:
                text = redact((await response.aread()).decode("utf-8", "replace"), self._key.all)
            finally:
                await response.aclose()
            try:
                data = load_json(text, f"POST {self.shown_url}: the reply")
            except json.JSONDecodeError:
                return text, None
            return text, data if isinstance(data, dict) else None

        try:
            async with asyncio.timeout(self.total_timeout):
                text, data = await call_with_retries(
                    self.retry, attempt, what=f"POST {self.shown_url}", secret=self._key.all
                )
        except TimeoutError:
            raise ModelHTTPError(
                f"POST {self.shown_url}: no reply within total_timeout={self.total_timeout:g} s"
            ) from None
        if data is None:
            snippet = text[:300]
            raise ModelResponseError(
                f"POST {self.shown_url} answered with invalid JSON: {snippet!r}"
            )
        return parse_completion(data, self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        async with self._open() as client:
            await self._detect(client)
            body, _ = self._body(request, stream=True)
            if not body.get("stream"):  # the profile cannot stream this request
                whole = self.review(await self._complete_body(client, body), request)
                raw = json.dumps(whole.raw, ensure_ascii=False) if whole.raw else None
                for i, delta in enumerate(split_response(whole, 24)):
                    yield replace(delta, raw=raw) if i == 0 else delta
                return
            what = f"POST {self.shown_url} (stream)"
            deadline = time.monotonic() + self.total_timeout
            response = await call_with_retries(
                self.retry, lambda: self._send(client, body), what=what, secret=self._key.all
            )
            reader = SSEReader(what, self._key.all)
            parts = StreamedText()
            try:
                async for delta in bounded(reader.deltas(response.aiter_lines()), deadline, what):
                    parts.add(delta)
                    yield delta
                reader.check_complete()
            except (httpx.TransportError, httpx.StreamError) as exc:
                raise ModelStreamError(
                    f"{what}: the connection failed after {reader.chunks} chunks "
                    f"({type(exc).__name__}); the partial reply was discarded"
                ) from exc
            finally:
                await response.aclose()
        if self._text_actions_on():
            for delta in parts.action_deltas(request.tools, str(len(request.messages))):
                yield delta

    def __repr__(self) -> str:
        mode = " streaming" if self.streaming else ""
        where = public_url(self.base_url)
        return f"<OpenAIModel {self.model!r} at {where} profile={self._profile.name}{mode}>"
