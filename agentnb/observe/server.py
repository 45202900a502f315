"""A recording proxy for any OpenAI-compatible app: change its base URL, watch its sessions.

    proxy = an.observe.proxy(upstream="http://127.0.0.1:8080/v1")   # returns at once
    client = openai.OpenAI(base_url=proxy.base_url, api_key=...)    # the app's only change
    proxy.sessions        # agentnb Sessions, one per conversation, growing as the app runs
    proxy.view()          # the conversations in a cell, each opening its session view
    proxy.save_cassette("app.jsonl")                # replays offline with an.models.Cassette
    proxy.close()         # or: with an.observe.proxy(...) as proxy: ...

Built on starlette + uvicorn (the ``observe`` extra) with httpx to the upstream, on
127.0.0.1, in a thread of its own with its own event loop, so it serves an app in a script,
in another process, or in a notebook cell that blocks on a synchronous client.

``POST .../chat/completions`` is recorded (:mod:`.record`); everything else (``/models``,
unknown paths) passes through untouched. Streams pass chunk by chunk as the upstream sent
them: the proxy parses a chunk only after handing it on. Request headers are forwarded
(keys included) and never kept: the recorder masks the key in whatever it keeps. Error
statuses reach the app unchanged; a stream the upstream cuts is cut for the app too; an
upstream that cannot be reached or does not answer in ``timeout`` s gets a 502 / 504 with an
OpenAI-shaped error body (there is nothing to forward).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import display
from .._secrets import request_secrets
from ..session import Session
from .background import BackgroundServer
from .record import Call, Recorder
from .relay import HOP, Stream, back_headers, gateway_error, relay
from .threading import explicit_id

__all__ = ["Proxy", "proxy"]


class Proxy:
    """A running recording proxy in front of ``upstream`` (see :func:`proxy`)."""

    def __init__(self, upstream: str, *, host: str = "127.0.0.1", port: int = 0,
                 timeout: float = 600.0) -> None:  # fmt: skip
        url = httpx.URL(upstream.rstrip("/"))
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"upstream must be an http(s) URL, not {upstream!r}")
        self.upstream = str(url)
        self._origin = f"{url.scheme}://{url.netloc.decode()}"
        self._prefix = url.path.rstrip("/")
        self.recorder = Recorder()
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=[
            "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])])  # fmt: skip
        self._server = BackgroundServer(app, host=host, port=port, name="agentnb-proxy",
                                        around=self._upstream_client)  # fmt: skip
        self.host, self.port = self._server.host, self._server.port

    @contextlib.asynccontextmanager
    async def _upstream_client(self) -> AsyncIterator[None]:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        timeout = httpx.Timeout(self.timeout, connect=min(10.0, self.timeout))
        async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
            self._client = client
            yield

    # -- public ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """What the app uses as its base URL (the upstream's path on the proxy's address)."""
        return f"http://{self.host}:{self.port}{self._prefix}"

    @property
    def sessions(self) -> list[Session]:
        """One agentnb session per conversation seen, in order of appearance (branches too)."""
        return self.recorder.sessions

    @property
    def calls(self) -> list[Call]:
        """Every proxied chat call: body, status, response text, latency, time to first chunk."""
        return list(self.recorder.calls)

    def session(self, id: str) -> Session:
        for s in self.recorder.sessions:
            if s.id == id:
                return s
        raise KeyError(f"no proxied session {id!r}; seen: {[s.id for s in self.sessions]}")

    def view(self, **options: Any) -> Any:
        """The conversations in a cell (needs ``agentnb[widgets]``): pick one to see it live."""
        return display.widgets("the proxy view").ProxyView(self, **options)

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
        path = request.url.path
        raw = await request.body()
        body: Any = None
        if request.method == "POST" and path.endswith("/chat/completions"):
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            return await self._recorded(request, raw, body)
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

    async def _recorded(self, request: Request, raw: bytes, body: dict[str, Any]) -> Response:
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
        call: Call | None
        try:
            call = self.recorder.begin(
                request.url.path,
                body,
                explicit_id(request.headers, body),
                secrets,
                query=request.url.query,
            )
        except Exception:  # a body the runtime cannot read: forward it, record nothing
            call = None
        try:
            answer = await sending
        except httpx.HTTPError as exc:
            if call is not None:
                self.recorder.fail(call, f"{type(exc).__name__}: {exc}", None)
            return gateway_error(exc)
        if call is None:
            return Stream(relay(answer), answer.status_code, back_headers(answer))
        streamed = answer.headers.get("content-type", "").startswith("text/event-stream")
        if not streamed or answer.status_code >= 400:
            try:
                content = await answer.aread()
            except httpx.HTTPError as exc:
                await answer.aclose()
                self.recorder.fail(call, f"{type(exc).__name__}: {exc}", answer.status_code)
                return gateway_error(exc)
            await answer.aclose()
            call.stream = False
            call._assembler = None
            self.recorder.finish(call, answer.status_code, content)
            return Response(content, status_code=answer.status_code, headers=back_headers(answer))
        recorder = self.recorder

        async def parts() -> AsyncIterator[bytes]:
            try:
                async for part in answer.aiter_raw():
                    if b"data: [DONE]" in part:  # record the reply before the app has all of it
                        recorder.chunk(call, part)
                        recorder.finish(call, answer.status_code, None)
                        yield part
                        continue
                    yield part
                    recorder.chunk(call, part)  # after the app has it: no added latency
                if call.status is None:
                    recorder.finish(call, answer.status_code, None)
            except httpx.HTTPError as exc:
                recorder.fail(call, f"the upstream stream broke off: {exc!r}", None)
                raise
            finally:
                await answer.aclose()
                if call.status is None and call.error is None:  # the app went away
                    recorder.fail(call, "the app closed the stream early", None)

        return Stream(parts(), answer.status_code, back_headers(answer))


def proxy(
    upstream: str, port: int = 0, *, host: str = "127.0.0.1", timeout: float = 600.0
) -> Proxy:
    """Start a recording proxy in front of ``upstream`` (an OpenAI-compatible base URL).

    Returns at once with the proxy serving in the background on ``host:port`` (a free port
    by default); point the app's base URL at ``proxy.base_url``.
    """
    return Proxy(upstream, host=host, port=port, timeout=timeout)
