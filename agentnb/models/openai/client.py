"""OpenAIModel: any OpenAI-compatible Chat Completions endpoint, over ``httpx.AsyncClient``.

OpenAI, Azure, DeepSeek, Qwen, vLLM, Ollama and llama.cpp servers all speak this protocol,
each with quirks; a compatibility :mod:`profile <agentnb.models.openai.profiles>` (named, or
detected) reshapes requests for them. Replies come whole or as SSE streams
(:mod:`~agentnb.models.openai.sse`); failures are retried
(:mod:`~agentnb.models.openai.retry`) and end as :class:`~agentnb.errors.ModelHTTPError`.
With ``text_actions=True`` a tool call written as text becomes a real one
(:mod:`~agentnb.models.openai.text_actions`).

The API key is read once (argument, else the profile's environment variable), stripped and
checked, and registered with every other credential of the client (``headers=``, query
parameters, the URL's userinfo) in one :class:`~agentnb._secrets.Secrets`:
every text the client passes on (errors, raw chunks, replies, URLs) is masked by it.

Every network phase of a call (the ``profile="auto"`` probe, connecting, headers, the body,
retries and their waits) runs under one deadline, ``total_timeout``; every body is bounded
by ``max_response_bytes`` after decompression (:mod:`~agentnb.models.openai.wire`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

import httpx

from ... import _json
from ..._secrets import Secrets, check_key, is_secret_name, public_url, url_secrets
from ..._settings import CHECKS
from ...errors import ConfigurationError, ModelHTTPError, ModelResponseError, ModelStreamError
from ..base import Delta, Model, ModelRequest, ModelResponse, split_response
from ..response import NOT_SENT
from ..strict import strict_tools
from .encoding import MessagesJSON
from .profiles import Profile, detect_profile, get_profile, is_loopback
from .retry import RetryPolicy, StatusError, call_with_retries
from .sse import SSEReader
from .text_actions import StreamedText, apply_text_actions, echoed_texts
from .wire import (
    MAX_ERROR_BYTES,
    MAX_RESPONSE_BYTES,
    bounded,
    load_json,
    parse_completion,
    read_limited,
    sse_bytes,
)

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
        timeout: seconds per read/write (httpx); ``total_timeout`` bounds a whole call, every
            phase included (probe, connect, headers, body, retries).
        max_response_bytes: the most a reply may carry, after decompression (whole replies
            and streams); past it a ``ModelResponseError``.
        retry: a :class:`~agentnb.models.openai.retry.RetryPolicy`.
        client: an ``httpx.AsyncClient`` you own (kept open); else ``transport`` (e.g.
            ``httpx.MockTransport``) or the default one, in a client opened per call.
        text_actions: turn tool calls written as text into real calls (profile default).
        context_window: the tokens the endpoint accepts in one request, when you know them
            (an agent without its own ``context_window`` adopts it and trims its history to
            fit, instead of meeting HTTP 400); ``LocalServer.model()`` sets its ``n_ctx``.
        strict_tools: send tool schemas with ``strict: true`` (OpenAI's structured outputs),
            each rewritten into the subset strict mode takes (:mod:`agentnb.models.strict`).
            A tool whose schema strict mode cannot express, or that has optional parameters
            (strict mode would make them required and send ``null``), is sent as it is; what
            was changed or left is reported once, in the first call's ``repairs``.

    A request's output spec (``Agent(output_type=...)``) is sent as ``response_format``
    ``json_schema`` (:meth:`~agentnb.models.output.OutputSpec.chat`).
    """

    #: ``gen_ai.provider.name`` of its calls (OpenTelemetry): it speaks the OpenAI API.
    provider = "openai"
    #: Where a call posts, after the base URL.
    path = "/chat/completions"
    #: The environment variables of the model name and the base URL, and the default URL.
    model_env, url_env, default_url = "OPENAI_MODEL", "OPENAI_BASE_URL", "https://api.openai.com/v1"
    #: Whether ``profile="auto"`` may ask a loopback server ``GET /models`` (Chat servers only).
    probes = True

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
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        text_actions: bool | None = None,
        name: str | None = None,
        context_window: int | None = None,
        strict_tools: bool = False,
    ) -> None:
        kind = type(self).__name__
        env_url = os.environ.get(self.url_env)
        self.base_url = (base_url or env_url or self.default_url).rstrip("/")
        self.model = model or os.environ.get(self.model_env) or ""
        if not self.model:
            raise ConfigurationError(
                f"{kind} needs a model name: {kind}('<model>', ...) or set {self.model_env}"
            )
        self._auto = profile == "auto"
        chosen = self._detected(self.base_url) if self._auto else get_profile(profile)
        key = check_key(api_key)
        if key is None and chosen.key_env:
            key = check_key(os.environ.get(chosen.key_env), chosen.key_env)
        if key is None and chosen.name == "generic" and base_url is None and env_url:
            key = check_key(os.environ.get("OPENAI_API_KEY"), "OPENAI_API_KEY")  # with the URL
        if key is None and chosen.needs_key:
            raise ConfigurationError(
                f"{kind} for {public_url(self.base_url)} (profile {chosen.name!r}) needs an "
                f"API key: pass api_key=... or set {chosen.key_env}"
            )
        #: Every credential of this client (repr ``***``); masks every text passed on.
        self.secrets = Secrets(url_secrets(self.base_url), key=key)
        if public_url(self.base_url) != self.base_url:  # credentials in the URL: kept here
            self.secrets.base_url, self.base_url = self.base_url, public_url(self.base_url)
        #: Extra query parameters; a credential among them shows as ``***``.
        self.query = self.secrets.query(dict(query or {}))
        given = {str(k): str(v) for k, v in (headers or {}).items()}
        for name, value in given.items():  # what a header cannot carry fails here, typed
            if is_secret_name(name):
                continue  # a credential is stripped and checked without being shown
            if not (name.isascii() and value.isascii() and value.isprintable()):
                raise ConfigurationError(f"the header {name!r} is not printable ASCII")
        #: Extra headers; a credential among them shows as ``***`` (it is kept in secrets).
        self.headers = self.secrets.headers(given)
        self._profile = chosen
        self._probed = not (
            self.probes and self._auto and chosen.name == "generic" and is_loopback(self.base_url)
        )
        self.text_actions = text_actions
        self.name = name or self.model
        #: Tokens one request may hold (an agent without its own window adopts it).
        self.context_window = CHECKS["context_window"]("context_window", context_window)
        self.streaming = stream
        self.params: dict[str, Any] = dict(params or {})
        self.max_response_bytes = max_response_bytes
        self.timeout = httpx.Timeout(timeout, connect=min(10.0, timeout))
        self.total_timeout = total_timeout
        self.retry = retry or RetryPolicy()
        self._client = client
        self._transport = transport
        self._encoder = MessagesJSON(chosen)
        self.strict_tools = strict_tools
        self._strict: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None

    # -- configuration -------------------------------------------------------------------

    def _detected(self, base_url: str) -> Profile:
        """The profile ``profile="auto"`` starts from (from the URL alone)."""
        return detect_profile(base_url)

    @property
    def profile(self) -> Profile:
        """The compatibility profile in use (after detection, once a call was made)."""
        return self._profile

    @property
    def transport(self) -> httpx.AsyncBaseTransport | None:
        """The transport given with ``transport=`` (None: httpx's own, or a ``client=``)."""
        return self._transport

    def with_transport(self, transport: httpx.AsyncBaseTransport) -> OpenAIModel:
        """A copy of this model (same settings, credentials and profile) that sends through
        ``transport`` (a recorder, a replayer, ``httpx.MockTransport``). Refused for a model
        built with ``client=``: that client carries its own transport."""
        if self._client is not None:
            raise ConfigurationError(
                "this OpenAIModel was built with client=, which carries its own transport; "
                "build it with transport=... to route its calls elsewhere"
            )
        other = copy.copy(self)
        other._transport = transport
        return other

    @property
    def url(self) -> str:
        return f"{self.secrets.base_url or self.base_url}{self.path}"

    @property
    def shown_url(self) -> str:
        """:attr:`url` for messages: credentials written into it are ``***``."""
        return public_url(self.url)

    def _auth_headers(self) -> dict[str, str]:
        """The credential headers: the key's and those given with ``headers=``."""
        key = self.secrets.key
        if not key:
            return dict(self.secrets.auth)
        if self._profile.auth_header == "authorization":
            return {**self.secrets.auth, "Authorization": f"Bearer {key}"}
        return {**self.secrets.auth, self._profile.auth_header: key}

    def _params(self) -> dict[str, Any]:
        return {**self.query, **self.secrets.params}

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._client is not None:
            yield self._client
            return
        async with httpx.AsyncClient(transport=self._transport, timeout=self.timeout) as client:
            yield client

    def _deadline(self) -> float:
        return asyncio.get_running_loop().time() + self.total_timeout

    async def _detect(self, client: httpx.AsyncClient, deadline: float) -> None:
        """Ask a loopback server ``GET /models`` once (at most 5 s and 1 MB, within the
        call's deadline); an unreadable answer just leaves the generic profile."""
        if self._probed:
            return
        self._probed = True
        listing: Any = None
        url = f"{self.secrets.base_url or self.base_url}/models"
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(min(deadline, loop.time() + 5.0)):
                headers = {**self.headers, **self._auth_headers()}
                request = client.build_request("GET", url, headers=headers, params=self._params())
                answer = await client.send(request, stream=True)
                try:
                    if answer.status_code == 200:
                        raw = await read_limited(answer, 1 << 20, f"GET {public_url(url)}")
                        listing = json.loads(raw)
                finally:
                    await answer.aclose()
        except (httpx.HTTPError, ValueError, RecursionError, TimeoutError, ModelResponseError):
            listing = None
        self._profile = detect_profile(self.base_url, listing if isinstance(listing, dict) else {})

    def _body(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], list[str]]:
        """The request body as the server takes it. Its messages are the request's wire dicts
        as the profile prepares them (shared, never changed: :meth:`_content` encodes the body,
        each message's JSON computed once); the rest is the body's own."""
        if self._encoder.profile is not self._profile:  # detected since: prepared anew
            self._encoder = MessagesJSON(self._profile)
        messages = self._encoder.prepared(request.messages)
        body: dict[str, Any] = {"model": self.model, **self.params, "messages": messages}
        strict_notes: list[str] = []
        if request.tools:
            body["tools"] = request.tools
            if self.strict_tools:
                body["tools"], strict_notes = self._strict_for(request.tools)
        body.update(request.params)
        if request.output is not None and "response_format" not in body:
            body["response_format"] = request.output.chat()
        body["model"] = self.model
        body, notes = self._profile.prepare_fields(body, stream=stream)
        said = [*strict_notes, *(n for n in notes if "not supported" in n)]
        dropped = self._encoder.kept(messages)
        if dropped:
            said.append(
                f"the reasoning of {dropped} {NOT_SENT}: it was written by "
                "another API (provider_data), which Chat Completions cannot take back"
            )
        return body, said

    def _strict_for(self, tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
        """The tools with strict schemas, rewritten once per tool list; the notes in words
        the first time (see ``strict_tools``)."""
        if self._strict is not None and self._strict[0] is tools:
            return self._strict[1], []
        sent, notes = strict_tools(tools)
        self._strict = (tools, sent)
        return sent, notes

    def _content(self, body: dict[str, Any]) -> bytes:
        """``_json.dumps(body)`` (compact) as UTF-8, the messages' part from the encoder (the
        bytes are joined once: a long session's body is copied once, not per field)."""
        parts: list[bytes] = []
        for key, value in body.items():
            parts += (b",", _json.dumps(key).encode(), b":")
            found = self._encoder.encoded(value) if key == "messages" else None
            parts += (
                found if found is not None else [_json.dumps(value, separators=(",", ":")).encode()]
            )
        parts[0] = b"{"
        parts.append(b"}")
        return b"".join(parts)

    def _text_actions_on(self) -> bool:
        return self._profile.text_actions if self.text_actions is None else self.text_actions

    def review(self, response: ModelResponse, request: ModelRequest) -> ModelResponse:
        """Post-process a whole reply: text actions, when enabled (streams call it too)."""
        if self._text_actions_on() and request.tools and not response.message.tool_calls:
            echoes = echoed_texts(request.messages)
            return apply_text_actions(response, request.tools, str(len(request.messages)), echoes)
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
        headers = {**self.headers, **self._auth_headers(), "Content-Type": "application/json"}
        if body.get("stream"):
            headers["Accept"] = "text/event-stream"
        content = self._content(body)  # agentnb._json's rule: lone surrogates escaped
        req = client.build_request(
            "POST",
            self.url,
            content=content,
            headers=headers,
            params=self._params(),
            timeout=self.timeout,
        )
        response = await client.send(req, stream=True)
        if response.status_code >= 300:
            try:  # only as much as a message shows: never a whole hostile body per retry
                raw = await read_limited(response, MAX_ERROR_BYTES, "", cut=True)
            finally:
                await response.aclose()
            text = self.secrets.mask(raw.decode("utf-8", "replace"))
            raise StatusError(response.status_code, text, response.headers)
        return response

    async def complete(self, request: ModelRequest) -> ModelResponse:
        deadline = self._deadline()
        async with self._open() as client:
            await self._detect(client, deadline)
            body, repairs = self._body(request, stream=False)
            response = await self._complete_body(client, body, deadline)
        if repairs:
            response = replace(response, repairs=(*response.repairs, *repairs))
        return self.review(response, request)

    def _late(self, what: str) -> ModelHTTPError:
        return ModelHTTPError(f"{what}: no reply within total_timeout={self.total_timeout:g} s")

    async def _read_whole(self, response: httpx.Response, what: str) -> ModelResponse:
        """A whole reply: bounded, masked, parsed (invalid JSON is a ModelResponseError)."""
        try:
            raw = await read_limited(response, self.max_response_bytes, what)
        finally:
            await response.aclose()
        text = self.secrets.mask(raw.decode("utf-8", "replace"))
        try:
            data = load_json(text, f"{what}: the reply")
        except json.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            raise ModelResponseError(f"{what} answered with invalid JSON: {text[:300]!r}")
        return self._parse(data)

    def _parse(self, data: dict[str, Any]) -> ModelResponse:
        """A whole reply's JSON (masked) as a :class:`ModelResponse`."""
        return parse_completion(data, self.name)

    def _reader(self, what: str) -> SSEReader:
        """What reads a streamed reply's bytes into deltas (masking them as it goes)."""
        return SSEReader(what, self.secrets)

    async def _complete_body(
        self, client: httpx.AsyncClient, body: dict[str, Any], deadline: float
    ) -> ModelResponse:
        what = f"POST {self.shown_url}"

        async def attempt() -> ModelResponse:
            return await self._read_whole(await self._send(client, body), what)

        try:
            async with asyncio.timeout_at(deadline):
                return await call_with_retries(self.retry, attempt, what=what, secret=self.secrets)
        except TimeoutError:
            raise self._late(what) from None

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        deadline = self._deadline()
        async with self._open() as client:
            await self._detect(client, deadline)
            body, _ = self._body(request, stream=True)
            if not body.get("stream"):  # the profile cannot stream this request
                whole = self.review(await self._complete_body(client, body, deadline), request)
                for delta in _as_deltas(whole):
                    yield delta
                return
            what = f"POST {self.shown_url} (stream)"
            try:
                async with asyncio.timeout_at(deadline):  # connect and headers are in it too
                    response = await call_with_retries(
                        self.retry, lambda: self._send(client, body), what=what, secret=self.secrets
                    )
            except TimeoutError:
                raise self._late(what) from None
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind and kind != "text/event-stream":
                whole = self.review(await self._not_a_stream(response, kind, what), request)
                for delta in _as_deltas(whole):
                    yield delta
                return
            reader = self._reader(what)
            parts = StreamedText()
            chunks = sse_bytes(response, self.max_response_bytes, what)
            try:
                deltas = bounded(reader.deltas(chunks), deadline, what, lambda: reader.finished)
                async for delta in deltas:
                    parts.add(delta)
                    yield delta
                reader.check_complete()
            except (httpx.TransportError, httpx.StreamError) as exc:
                if not reader.finished:  # a reply with its finish_reason is whole: kept
                    raise ModelStreamError(
                        f"{what}: the connection failed after {reader.chunks} chunks "
                        f"({type(exc).__name__}); the partial reply was discarded"
                    ) from exc
            finally:
                await response.aclose()
        if self._text_actions_on():
            echoes = echoed_texts(request.messages)
            for delta in parts.action_deltas(request.tools, str(len(request.messages)), echoes):
                yield delta

    async def _not_a_stream(self, response: httpx.Response, kind: str, what: str) -> ModelResponse:
        """A streamed request answered with a whole body: a completion is read as one (some
        servers ignore ``stream``); anything else is a ModelResponseError saying what came."""
        if kind == "application/json":
            return await self._read_whole(response, what)
        try:
            raw = await read_limited(response, MAX_ERROR_BYTES, what, cut=True)
        finally:
            await response.aclose()
        snippet = self.secrets.mask(raw.decode("utf-8", "replace"))[:300]
        raise ModelResponseError(
            f"{what}: the server answered a streamed request with {kind}, not an event "
            f"stream: {snippet!r}"
        )

    def __repr__(self) -> str:
        mode = " streaming" if self.streaming else ""
        where = public_url(self.base_url)
        kind = type(self).__name__
        return f"<{kind} {self.model!r} at {where} profile={self._profile.name}{mode}>"


def _as_deltas(whole: ModelResponse) -> list[Delta]:
    """A whole reply as the deltas of a stream (the first keeps the raw reply)."""
    raw = json.dumps(whole.raw, ensure_ascii=False) if whole.raw else None
    deltas = split_response(whole, 24)
    return [replace(d, raw=raw) if i == 0 else d for i, d in enumerate(deltas)]
