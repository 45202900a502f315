"""An ASGI app served by uvicorn on 127.0.0.1 in a thread of its own, started at once.

The recording proxy and the stand-in upstream both run this way: with their own event loop,
they serve a script, another process, or a notebook cell that blocks on a synchronous
client alike. ``port=0`` takes a free port.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["BackgroundServer"]

#: Seconds a connection may take to send a request's headers (and between requests).
HEADER_TIMEOUT = 10.0


class _Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, with a deadline for headers: a client that drips them
    (slowloris) is disconnected after :data:`HEADER_TIMEOUT` s instead of held forever."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def _arm(self) -> None:
        waiting_for = self.cycle  # a new request's headers make a new cycle
        self.loop.call_later(HEADER_TIMEOUT, self._late, waiting_for)

    def _late(self, waiting_for: Any) -> None:
        if self.cycle is waiting_for and not self.transport.is_closing():
            self.transport.close()


class BackgroundServer:
    """Serve ``app`` on ``host:port``; ``around`` wraps the serving (e.g. an httpx client)."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "agentnb-server",
        around: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    ) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Without this, a stream's small writes wait for the client's delayed ACK (~40 ms).
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.bind((host, port))
        self.host, self.port = self._sock.getsockname()[:2]
        config = uvicorn.Config(
            app,
            http=_Protocol,
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,  # a proxy forwards the upstream's own
            date_header=False,
        )
        self._server = uvicorn.Server(config)
        self._around = around
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()
        for _ in range(1000):
            if self._server.started or not self._thread.is_alive():
                break
            self._thread.join(0.01)
        if not self._server.started:
            raise RuntimeError(f"{name} did not start on {self.host}:{self.port}")

    def _serve(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._sock.listen(128)
        if self._around is None:
            await self._server.serve(sockets=[self._sock])
            return
        async with self._around():
            await self._server.serve(sockets=[self._sock])

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def close(self) -> None:
        """Stop serving (open streams end) and wait for the thread."""
        if self._thread.is_alive():
            self._server.should_exit = True
            self._thread.join(10)
        self._sock.close()
