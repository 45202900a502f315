"""A deterministic OpenAI-compatible upstream on 127.0.0.1: each reply is a function of the request.

``echo <last user text> @<number of messages>`` for a user turn; a tool call ``lookup`` when
the last user text starts with ``tool:``; ``result: <content>`` after a tool message. It
streams when asked (3-character text chunks, tool arguments in two pieces) and keeps every
request body. Two conversations with identical openings get identical replies: the proxy
must keep them apart by what they do next, not by what the upstream says.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route


def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    last = messages[-1]
    content = last.get("content") or ""
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"result: {content}"}
    if last["role"] == "user" and content.startswith("tool:"):
        call = {
            "id": f"call_{len(messages)}_{abs(hash(content)) % 10_000}",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"q": content[5:]})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": f"echo {content} @{len(messages)}"}


def chunks(message: dict[str, Any]) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-echo",
            "object": "chat.completion.chunk",
            "model": "echo",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    if message.get("tool_calls"):
        call = message["tool_calls"][0]
        args = call["function"]["arguments"]
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": "lookup", "arguments": args[:4]},
                        }
                    ]
                }
            )
        )
        out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[4:]}}]}))
        out.append(chunk({}, "tool_calls"))
        return out
    text = message["content"]
    out += [chunk({"content": text[i : i + 3]}) for i in range(0, len(text), 3)]
    out.append(chunk({}, "stop"))
    return out


class EchoServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.delay = 0.0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _run(self) -> None:
        self._sock.listen(64)
        asyncio.run(self._server.serve(sockets=[self._sock]))

    async def _chat(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        if self.delay:
            await asyncio.sleep(self.delay)
        message = answer(body["messages"])
        if not body.get("stream"):
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
            return JSONResponse(
                {
                    "id": "chatcmpl-echo",
                    "object": "chat.completion",
                    "model": "echo",
                    "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                }
            )

        async def events():
            for c in chunks(message):
                yield f"data: {json.dumps(c)}\n\n".encode()
                await asyncio.sleep(0)
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    def __enter__(self) -> EchoServer:
        self._thread.start()
        for _ in range(500):
            if self._server.started:
                break
            self._thread.join(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()
