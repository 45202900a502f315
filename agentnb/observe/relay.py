"""What goes back to the app: the upstream's bytes, its headers, or a gateway error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.responses import JSONResponse, Response

__all__ = ["HOP", "Stream", "back_headers", "gateway_error", "relay"]

#: Not forwarded either way (hop-by-hop, or recomputed by the server that sends).
HOP = frozenset(
    ("host", "connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
     "proxy-authorization", "proxy-connection", "content-length")
)  # fmt: skip


class Stream(Response):
    """A streamed body sent straight to the ASGI server, one message per upstream chunk.

    Leaner than ``StreamingResponse`` (no task group per response): the app's disconnect is
    noticed through one pending ``receive()``, checked between chunks.
    """

    def __init__(self, parts: AsyncIterator[bytes], status: int, headers: dict[str, str]):
        self.parts = parts
        self.status_code = status
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        gone = asyncio.ensure_future(receive())  # answers http.disconnect when the app leaves
        parts = self.parts
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})  # fmt: skip
            async for part in parts:
                await send({"type": "http.response.body", "body": part, "more_body": True})
                if gone.done():
                    break
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()
            await parts.aclose()  # type: ignore[attr-defined]


async def relay(answer: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for part in answer.aiter_raw():
            yield part
    finally:
        await answer.aclose()


def back_headers(answer: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in answer.headers.items() if k.lower() not in HOP}


def gateway_error(exc: httpx.HTTPError) -> Response:
    timeout = isinstance(exc, httpx.TimeoutException)
    kind = "upstream_timeout" if timeout else "upstream_unreachable"
    message = f"agentnb proxy: the upstream {'timed out' if timeout else 'failed'}: {exc!r}"
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": kind}},
        status_code=504 if timeout else 502,
    )
