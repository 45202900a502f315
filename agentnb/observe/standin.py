"""Any agentnb model behind an OpenAI-compatible HTTP endpoint: an upstream to watch an app on.

    with an.observe.serve(an.travel.TravelModel(), delay=0.3) as upstream:
        proxy = an.observe.proxy(upstream=upstream.base_url)

``POST /v1/chat/completions`` (whole or streamed as SSE, tool calls included) and
``GET /v1/models``. The stand-in travel model needs no network and no weights, so an app
written with the openai SDK can be watched in any environment; ``delay`` (seconds per call)
and ``chunk_delay`` (per streamed chunk) make it think like a real one.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..models.base import ModelLike, ModelRequest
from .background import BackgroundServer

__all__ = ["ModelServer", "serve"]
_NOT_PARAMS = frozenset(("model", "messages", "tools", "stream", "stream_options"))


def _chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


class ModelServer:
    """``model`` served on 127.0.0.1 (see :func:`serve`): ``base_url``, ``close()``."""

    def __init__(
        self, model: ModelLike, *, port: int = 0, delay: float = 0.0, chunk_delay: float = 0.0
    ) -> None:
        self.model = model
        self.delay = delay
        self.chunk_delay = chunk_delay
        self.calls = 0
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )
        self._server = BackgroundServer(app, port=port, name="agentnb-standin")

    @property
    def base_url(self) -> str:
        return f"http://{self._server.host}:{self._server.port}/v1"

    async def _models(self, request: Request) -> Response:
        listing = [{"id": self.model.name, "object": "model", "owned_by": "agentnb"}]
        return JSONResponse({"object": "list", "data": listing})

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        params = {k: v for k, v in body.items() if k not in _NOT_PARAMS}
        model_request = ModelRequest(body["messages"], body.get("tools") or [], params)
        if self.delay:
            await asyncio.sleep(self.delay)
        response = await self.model.complete(model_request)
        self.calls += 1
        message = response.message.wire()
        calls = message.get("tool_calls") or []
        finish = response.finish_reason or ("tool_calls" if calls else "stop")
        base = {
            "id": f"chatcmpl-standin-{os.urandom(4).hex()}",
            "created": int(time.time()),
            "model": str(body.get("model") or self.model.name),
        }
        if not body.get("stream"):
            usage = response.usage
            completion = {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
            if usage is not None:
                completion["usage"] = {
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                    "total_tokens": usage.total_tokens,
                }
            return JSONResponse(completion)
        base["object"] = "chat.completion.chunk"
        return StreamingResponse(
            self._stream(base, message, finish), media_type="text/event-stream"
        )

    async def _stream(
        self, base: dict[str, Any], message: dict[str, Any], finish: str
    ) -> AsyncIterator[bytes]:
        yield _chunk(base, {"role": "assistant", "content": ""})
        text = message.get("content") or ""
        pieces: list[dict[str, Any]] = [
            {"content": text[i : i + 8]} for i in range(0, len(text), 8)
        ]
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call["function"]
            pieces.append(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": function["name"], "arguments": ""},
                        }
                    ]
                }
            )
            arguments = function.get("arguments") or ""
            for i in range(0, len(arguments), 16):
                piece = {"index": index, "function": {"arguments": arguments[i : i + 16]}}
                pieces.append({"tool_calls": [piece]})
        for piece in pieces:
            if self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            yield _chunk(base, piece)
        yield _chunk(base, {}, finish)
        yield b"data: [DONE]\n\n"

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ModelServer {self.model.name!r} at {self.base_url}, {self.calls} calls>"


def serve(
    model: ModelLike | None = None, *, port: int = 0, delay: float = 0.0, chunk_delay: float = 0.0
) -> ModelServer:
    """Serve ``model`` (the travel stand-in by default) as an OpenAI-compatible endpoint."""
    if model is None:
        # the example domain, by name: the runtime layers never import it (tests/test_boundaries)
        model = importlib.import_module("agentnb.travel").TravelModel()
    return ModelServer(model, port=port, delay=delay, chunk_delay=chunk_delay)
