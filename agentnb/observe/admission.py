"""Which requests the proxy serves: local ones, of bounded size, arriving in time.

The proxy listens on 127.0.0.1, but a web page in the user's browser can still reach it: by
a DNS name that resolves to 127.0.0.1 (DNS rebinding) or by posting a form or a
``text/plain`` body across origins without asking first. So a request is served only when

* its ``Host`` is the proxy's own address (``127.0.0.1``, ``localhost``, ``[::1]``, the host
  it was started on, or a name given in ``allowed_hosts``), with or without the port;
* it carries no ``Origin`` of another address (browsers send one; apps' SDKs do not);
* its body is not one a page may post anywhere (``text/plain``, a urlencoded form);
* its body is at most ``max_request_bytes`` and arrives within ``request_timeout`` s.

Refusals are JSON errors with a ``type`` saying why (403, 415, 413, 408).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["MAX_REQUEST_BYTES", "Admission", "refusal"]

#: The default bound on one request body.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
#: Bodies a browser page may post to any address without asking first (CORS "simple").
FORM_TYPES = ("text/plain", "application/x-www-form-urlencoded")
_LOCAL = ("127.0.0.1", "localhost", "[::1]")


def refusal(status: int, message: str, kind: str) -> Response:
    """A JSON error from the proxy itself (the upstream never saw the request)."""
    error = {"message": f"agentnb proxy: {message}", "type": kind, "code": kind}
    return JSONResponse({"error": error}, status_code=status)


class Admission:
    """The proxy's door (see the module docstring)."""

    def __init__(self, names: Iterable[str], port: int, max_bytes: int, timeout: float) -> None:
        #: The ``Host`` values served: each name with and without the port.
        self.hosts = frozenset(
            name.lower() for given in (*_LOCAL, *names) for name in (given, f"{given}:{port}")
        )
        self.max_bytes = max_bytes
        self.timeout = timeout

    def refused(self, request: Request) -> Response | None:
        """Why ``request`` is not served (a web page could have made it), or None."""
        host = request.headers.get("host", "").lower()
        if host not in self.hosts:
            return refusal(
                403,
                f"Host {host!r} is not this proxy (a page reaching it by another name?); "
                "pass allowed_hosts=[...] to serve it",
                "forbidden_host",
            )
        origin = request.headers.get("origin")
        if origin is not None:
            try:
                where = httpx.URL(origin).netloc.decode().lower()
            except httpx.InvalidURL:
                where = origin
            if where not in self.hosts:
                why = f"requests from the web page {origin!r} are not served"
                return refusal(403, why, "forbidden_origin")
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if request.method == "POST" and kind in FORM_TYPES:
            return refusal(415, f"a {kind} body is not an API request", "unsupported_media_type")
        return None

    async def admit(self, request: Request) -> bytes | Response:
        """The request's body, or the refusal to send instead."""
        refused = self.refused(request)
        if refused is not None:
            return refused
        parts: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.timeout):
                async for part in request.stream():
                    size += len(part)
                    if size > self.max_bytes:
                        why = f"the request is larger than max_request_bytes={self.max_bytes:,}"
                        return refusal(413, why, "request_too_large")
                    parts.append(part)
        except TimeoutError:
            why = f"the request body did not arrive in {self.timeout:g} s"
            return refusal(408, why, "request_timeout")
        return b"".join(parts)
