"""A hostile OpenAI-compatible server on 127.0.0.1: it drips, floods and bombs.

``HostileServer(mode)`` answers every request the same hostile way:

* ``drip-headers``: accepts, reads the request, then sends nothing (the status line never
  comes);
* ``drip-body``: a 200 with a Content-Length, then one byte every 0.2 s;
* ``drip-stream``: an event stream that sends a comment every 0.2 s and never finishes;
* ``drip-models``: ``GET /models`` drips (the ``profile="auto"`` probe), chat answers fine;
* ``huge``: a 200 announcing 1 GB and sending zeros in 1 MB writes for as long as read;
* ``huge-stream``: an event stream of 1 MB ``data:`` lines without end;
* ``gzip-bomb``: ``Content-Encoding: gzip``, ~1 MB on the wire that expands to 1 GB.
"""

from __future__ import annotations

import asyncio
import json
import threading
import zlib

OK = {
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                 "finish_reason": "stop"}],
}  # fmt: skip


def gzip_bomb(megabytes: int = 1024) -> bytes:
    """A gzip stream of ``megabytes`` MiB of zeros, built in milliseconds: after a full flush
    every 1 MiB block compresses to the same ~1 KB, so the middle is one block repeated
    (the trailer's CRC is wrong; a reader that stops early never gets there)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    first = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    middle = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    return first + middle * (megabytes - 1) + c.flush()


class HostileServer:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(5)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            await reader.readexactly(length)
            self.requests += 1
            await self._answer(writer, method, path)
        except (ConnectionError, asyncio.CancelledError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _answer(self, writer: asyncio.StreamWriter, method: str, path: str) -> None:
        mode = self.mode
        if path.endswith("/models"):
            if mode == "drip-models":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                for _ in range(100000):
                    writer.write(b" ")
                    await writer.drain()
                    await asyncio.sleep(0.2)
            mode = "ok"
        if mode == "ok":
            body = json.dumps(OK).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
            await writer.drain()
        elif mode == "drip-headers":
            await asyncio.sleep(3600)
        elif mode == "drip-body":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100000\r\n\r\n")  # fmt: skip
            while True:
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.2)
        elif mode in ("drip-stream", "huge-stream"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
            chunk = {"choices": [{"index": 0, "delta": {"content": "x" * (1 << 20)}}]}
            line = b"data: " + json.dumps(chunk).encode() + b"\n\n"
            while True:
                writer.write(b": still here\n\n" if mode == "drip-stream" else line)
                await writer.drain()
                await asyncio.sleep(0.2 if mode == "drip-stream" else 0)
        elif mode == "huge":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % (1 << 30))  # fmt: skip
            block = b"\x20" * (1 << 20)
            for _ in range(1024):
                writer.write(block)
                await writer.drain()
        elif mode == "gzip-bomb":
            bomb = gzip_bomb()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb))  # fmt: skip
            for i in range(0, len(bomb), 1 << 16):
                writer.write(bomb[i : i + (1 << 16)])
                await writer.drain()
