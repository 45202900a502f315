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

__all__ = ["BackgroundServer"]


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
            app, log_level="warning", access_log=False, lifespan="off",
            server_header=False, date_header=False,  # a proxy forwards the upstream's own
        )  # fmt: skip
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
