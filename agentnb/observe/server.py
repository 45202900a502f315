"""A recording proxy for any app that talks to a model: change its base URL, watch its sessions.

    proxy = an.observe.proxy(upstream="http://127.0.0.1:8080/v1")   # returns at once
    client = openai.OpenAI(base_url=proxy.base_url, api_key=...)    # the app's only change
    client = anthropic.Anthropic(base_url=proxy.url, api_key=...)   # (it adds /v1 itself)
    proxy.sessions        # agentnb Sessions, one per conversation, growing as the app runs
    proxy.view()          # the conversations in a cell, each opening its session view
    proxy.save_cassette("app.jsonl")                # replays offline (see .cassette)
    proxy.close()         # or: with an.observe.proxy(...) as proxy: ...

Built on starlette + uvicorn (the ``observe`` extra) with httpx to the upstream, on
127.0.0.1, in a thread of its own with its own event loop, so it serves an app in a script,
in another process, or in a notebook cell that blocks on a synchronous client.

``POST .../chat/completions``, ``.../responses`` and ``.../messages`` are recorded (the
three wire formats of :mod:`.wire`, by :mod:`.recorder`); everything else (``/models``,
unknown paths) passes through untouched. Streams pass chunk by chunk as the upstream sent
them: the proxy reads a chunk only after handing it on. Request headers are forwarded (keys
included) and never kept: every credential a request carries (any credential-named header,
the query string) is masked in whatever is kept. Error statuses reach the app unchanged; a
stream the upstream cuts is cut for the app too; an upstream that cannot be reached or does
not answer in ``timeout`` s gets a 502 / 504 with an error body in the app's format.

Bounded and local by default: a request body over ``max_request_bytes`` is refused (413),
one that drips for ``request_timeout`` s too (408), a connection that does not finish its
headers in 10 s is closed; a reply over ``max_response_bytes`` (counted after
decompression, streams included) is cut with an error in the app's format (502, or an error
event in a stream), and what a call keeps is bounded by the same limit. Only requests
addressed to the proxy's own host (``Host``) from no browser page of another origin
(``Origin``), never a form or ``text/plain`` body, are served: a web page cannot post into
it (DNS rebinding); ``allowed_hosts`` adds names it may be reached by.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import display
from ..models import is_secret_name, request_secrets
from ..session import Session
from .admission import MAX_REQUEST_BYTES, Admission
from .background import BackgroundServer
from .calls import ProxiedCall
from .conversations import Conversation
from .recorder import Recorder, Upstream
from .relay import HOP, Stream, back_headers, gateway_error, recorded_stream, recorded_whole, relay
from .wire import Wire, wire_for

__all__ = ["MAX_RESPONSE_BYTES", "Proxy", "proxy"]

#: The default bound on one reply, whole or streamed, counted after decompression.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024


class Proxy:
    """A running recording proxy in front of ``upstream`` (see :func:`proxy`)."""

    def __init__(
        self,
        upstream: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 600.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        request_timeout: float = 60.0,
        allowed_hosts: Sequence[str] = (),
    ) -> None:
        url = httpx.URL(upstream.rstrip("/"))
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"upstream must be an http(s) URL, not {upstream!r}")
        self.upstream = str(url)
        self._origin = f"{url.scheme}://{url.netloc.decode()}"
        self._prefix = url.path.rstrip("/")
        self._target = Upstream(url.host, url.port or (443 if url.scheme == "https" else 80))
        self.recorder = Recorder()
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self._client: httpx.AsyncClient | None = None
        methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=methods)])
        self._server = BackgroundServer(
            app, host=host, port=port, name="agentnb-proxy", around=self._upstream_client
        )
        self.host, self.port = self._server.host, self._server.port
        #: Which requests are served (local ones, bounded): see :mod:`.admission`.
        self.admission = Admission(
            (host, *allowed_hosts), self.port, max_request_bytes, request_timeout
        )

    @contextlib.asynccontextmanager
    async def _upstream_client(self) -> AsyncIterator[None]:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        timeout = httpx.Timeout(self.timeout, connect=min(10.0, self.timeout))
        async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
            self._client = client
            yield

    # -- public ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The proxy's address (``http://127.0.0.1:PORT``): the base URL of SDKs that add
        the API's path themselves (Anthropic's adds ``/v1/messages``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI SDK uses as its base URL (the upstream's path on the proxy)."""
        return f"{self.url}{self._prefix}"

    @property
    def sessions(self) -> list[Session]:
        """One agentnb session per conversation seen, in order of appearance (branches too)."""
        return self.recorder.sessions

    @property
    def conversations(self) -> list[Conversation]:
        """How each session came to be: ``how`` (new, branch, compaction, unthreaded),
        ``parent`` and ``note``; ``.session`` is the session."""
        return list(self.recorder.conversations.conversations)

    @property
    def calls(self) -> list[ProxiedCall]:
        """Every recorded call: body, status, response text, latency, time to first chunk."""
        return list(self.recorder.calls)

    @property
    def skipped(self) -> list[str]:
        """Requests forwarded but not recorded (their body could not be read), in words."""
        return list(self.recorder.skipped)

    def session(self, id: str) -> Session:
        for s in self.recorder.sessions:
            if s.id == id:
                return s
        raise KeyError(f"no proxied session {id!r}; seen: {[s.id for s in self.sessions]}")

    def view(self, **options: Any) -> Any:
        """The conversations in a cell (needs ``agentnb[widgets]``): pick one to see it live."""
        return display.view(self, **options)

    def save_cassette(self, path: str | Path) -> Path:
        """Write what was seen as a cassette (``an.models.Cassette(path).replay()``)."""
        from .cassette import save_cassette

        return save_cassette(self.recorder.calls, path)

    def close(self) -> None:
        """Stop serving (open streams end); the sessions stay readable."""
        self._server.close()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self._server.running else "closed"
        return (
            f"<Proxy {self.base_url} -> {httpx.URL(self.upstream).copy_with(query=None)} "
            f"{state}, {len(self.sessions)} sessions, {len(self.recorder.calls)} calls>"
        )

    # -- handling ---------------------------------------------------------------------------
    def _forward_headers(self, request: Request) -> dict[str, str]:
        return {k: v for k, v in request.headers.items() if k.lower() not in HOP}

    async def _handle(self, request: Request) -> Response:
        raw = await self.admission.admit(request)
        if isinstance(raw, Response):
            return raw
        wire = wire_for(request.url.path) if request.method == "POST" else None
        body: Any = None
        if wire is not None:
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):
                body = None
        if wire is not None and isinstance(body, dict):
            return await self._recorded(request, raw, body, wire)
        return await self._passthrough(request, raw)

    def _url(self, request: Request) -> str:
        query = request.url.query
        return f"{self._origin}{request.url.path}" + (f"?{query}" if query else "")

    async def _passthrough(self, request: Request, raw: bytes) -> Response:
        assert self._client is not None
        upstream = self._client.build_request(
            request.method, self._url(request), headers=self._forward_headers(request), content=raw
        )
        try:
            answer = await self._client.send(upstream, stream=True)
        except httpx.HTTPError as exc:
            return gateway_error(exc)
        return Stream(relay(answer), answer.status_code, back_headers(answer))

    async def _recorded(
        self, request: Request, raw: bytes, body: dict[str, Any], wire: Wire
    ) -> Response:
        assert self._client is not None
        secrets = request_secrets(request.headers.items(), str(request.url))
        headers = self._forward_headers(request)
        headers["accept-encoding"] = "identity"  # the recorder reads the bytes it forwards
        upstream = self._client.build_request(
            "POST", self._url(request), headers=headers, content=raw
        )
        # The request leaves first; the recorder works while the upstream thinks.
        sending = asyncio.ensure_future(self._client.send(upstream, stream=True))
        await asyncio.sleep(0)
        if secrets and secrets.occurs_in(raw.decode("utf-8", "replace")):
            body = secrets.mask_data(body)
        pairs = parse_qsl(request.url.query, keep_blank_values=True)
        call: ProxiedCall | None
        try:
            call = await self.recorder.begin(
                wire,
                body,
                path=request.url.path,
                query=sorted((k, v) for k, v in pairs if not is_secret_name(k)),
                headers=request.headers,
                secrets=secrets,
                upstream=self._target,
                traceparent=request.headers.get("traceparent"),
            )
        except Exception as exc:  # a body agentnb cannot read: forwarded, said, not recorded
            call = None
            self.recorder.skipped.append(secrets.mask(f"{request.url.path}: {exc}"))
        try:
            answer = await sending
        except httpx.HTTPError as exc:
            if call is not None:
                self.recorder.fail(call, f"{type(exc).__name__}: {exc}")
            return gateway_error(exc, wire)
        if call is None:
            return Stream(relay(answer), answer.status_code, back_headers(answer))
        streamed = answer.headers.get("content-type", "").startswith("text/event-stream")
        if not streamed or answer.status_code >= 400:
            return await recorded_whole(call, answer, wire, self.recorder, self.max_response_bytes)
        return Stream(
            recorded_stream(call, answer, wire, self.recorder, self.max_response_bytes),
            answer.status_code,
            back_headers(answer, decoded=True),
        )


def proxy(
    upstream: str,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    timeout: float = 600.0,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
    max_request_bytes: int = MAX_REQUEST_BYTES,
    request_timeout: float = 60.0,
    allowed_hosts: Sequence[str] = (),
) -> Proxy:
    """Start a recording proxy in front of ``upstream`` (the base URL the app would use:
    an OpenAI-compatible ``…/v1``, or Anthropic's ``https://api.anthropic.com``).

    Returns at once with the proxy serving in the background on ``host:port`` (a free port
    by default); point the app's base URL at ``proxy.base_url`` (``proxy.url`` for SDKs that
    add ``/v1`` themselves). See the module docstring for the limits.
    """
    return Proxy(
        upstream,
        host=host,
        port=port,
        timeout=timeout,
        max_response_bytes=max_response_bytes,
        max_request_bytes=max_request_bytes,
        request_timeout=request_timeout,
        allowed_hosts=allowed_hosts,
    )
