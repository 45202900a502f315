"""A fault-injecting OpenAI-compatible server on 127.0.0.1, scripted per test.

Each request to ``POST /v1/chat/completions`` takes the next step of the script (the last
step repeats). Steps say what to do: answer JSON, answer an HTTP error with headers
(``Retry-After``), stream SSE chunks with delays, truncate the stream, send malformed JSON,
wait before answering, or drop the connection. ``GET /v1/models`` answers a listing.
The server runs its own event loop in a thread, so it serves sync and async tests alike;
every request is recorded (method, path, headers, JSON body).
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Step:
    status: int = 200
    body: Any = None  # dict → JSON; str → sent as is
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[Any] | None = None  # SSE payloads (dict → JSON, str → as is)
    delay: float = 0.0  # before the status line
    chunk_delay: float = 0.0  # between SSE events
    done: bool = True  # send data: [DONE]
    cut_after: int | None = None  # close the connection after this many chunks
    drop: bool = False  # close the connection without answering


def reply(content: str = "ok", **extra: Any) -> Step:
    message = {"role": "assistant", "content": content, **extra}
    return Step(body=completion(message))


def completion(message: dict[str, Any], finish: str = "stop", usage: bool = True) -> dict:
    body: dict[str, Any] = {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "model": "fault",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    return body


def text_chunks(*pieces: str, finish: str = "stop") -> list[dict]:
    chunks: list[dict] = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return chunks


class FaultServer:
    """``with FaultServer() as server: server.script(...); server.base_url``."""

    def __init__(self) -> None:
        self.steps: list[Step] = [reply()]
        self.requests: list[dict[str, Any]] = []
        self.models = {"object": "list", "data": [{"id": "fault", "object": "model"}]}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._calls = 0
        self.port = 0

    def script(self, *steps: Step) -> FaultServer:
        self.steps, self._calls = list(steps), 0
        self.requests.clear()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FaultServer:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(5)
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
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.CancelledError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        raw = await reader.readexactly(int(headers.get("content-length", 0)))
        body = json.loads(raw) if raw else None
        self.requests.append({"method": method, "path": path, "headers": headers, "body": body})
        if method == "GET" and path.endswith("/models"):
            await self._send(writer, Step(body=self.models))
            return
        step = self.steps[min(self._calls, len(self.steps) - 1)]
        self._calls += 1
        await self._send(writer, step)

    async def _send(self, writer: asyncio.StreamWriter, step: Step) -> None:
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.drop:
            writer.transport.abort()
            return
        reason = {200: "OK", 429: "Too Many Requests"}.get(step.status, "Status")
        head = [f"HTTP/1.1 {step.status} {reason}", "Connection: close"]
        head += [f"{k}: {v}" for k, v in step.headers.items()]
        if step.chunks is None:
            data = step.body if isinstance(step.body, str) else json.dumps(step.body or {})
            payload = data.encode()
            head += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
            await writer.drain()
            return
        head.append("Content-Type: text/event-stream")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        for i, chunk in enumerate(step.chunks):
            if step.cut_after is not None and i >= step.cut_after:
                writer.transport.abort()
                return
            if step.chunk_delay:
                await asyncio.sleep(step.chunk_delay)
            text = chunk if isinstance(chunk, str) else json.dumps(chunk, ensure_ascii=False)
            writer.write(f"data: {text}\n\n".encode())
            await writer.drain()
        if step.done:
            writer.write(b"data: [DONE]\n\n")
            await writer.drain()
