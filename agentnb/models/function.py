"""FunctionModel: a model whose replies come from your function of the request."""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from .base import Delta, Model, ModelRequest, ModelResponse, coerce_response, stream_response

__all__ = ["FunctionModel"]


class FunctionModel(Model):
    """``fn(request) -> reply`` (sync or async); the request exposes ``.messages``.

    The reply takes any form :class:`~agentnb.models.ScriptedModel` accepts. Use it to see the
    loop in isolation, or to write a rule-based model a lesson can reason about.

    ``requests`` holds the last ``keep_requests`` requests it was asked, newest last (``None``
    keeps them all). Bounded by default: a request holds its session's messages by reference,
    so a model kept for a long sweep would otherwise keep every session of it alive.
    """

    def __init__(
        self,
        fn: Callable[[ModelRequest], Any],
        *,
        stream: bool = False,
        name: str | None = None,
        chunk_size: int = 12,
        keep_requests: int | None = 100,
    ) -> None:
        self.fn = fn
        self.name = name or str(getattr(fn, "__name__", "function"))
        self.streaming = stream
        self.chunk_size = chunk_size
        self.requests: deque[ModelRequest] = deque(maxlen=keep_requests)
        self._async = inspect.iscoroutinefunction(fn)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self._async:
            reply = await self.fn(request)
        else:
            reply = self.fn(request)
            if inspect.isawaitable(reply):  # a sync function that returned an awaitable
                reply = await reply
        return coerce_response(reply, self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        async for delta in stream_response(await self.complete(request), self.chunk_size):
            yield delta
