"""The model protocol: what the runtime sends (ModelRequest) and gets back (ModelResponse).

A model is any object with ``name``, ``streaming`` and ``async complete(request)``; a
streaming model also has ``stream(request)``, an async iterator of :class:`Delta`.
Subclass :class:`Model` to get a ``stream`` that splits ``complete``'s reply into deltas.
A model may also carry a ``tokenizer`` (see :mod:`agentnb.tokens`) for budgets, and a
``context_window`` (tokens its server accepts in one request): an :class:`~agentnb.Agent`
given no ``context_window`` of its own adopts it, so its requests are trimmed to fit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from .deltas import Delta, ReplyAssembler, split_response, stream_response
from .request import ModelRequest, RequestDiff
from .response import ModelResponse, Usage, coerce_response

__all__ = [
    "Delta",
    "Model",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "ReplyAssembler",
    "RequestDiff",
    "Usage",
    "coerce_response",
    "split_response",
    "stream_response",
]


@runtime_checkable
class ModelLike(Protocol):
    """What the runtime needs of a model."""

    name: str
    streaming: bool

    async def complete(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[Delta]: ...


class Model:
    """Base class for models: implement ``complete``; ``stream`` splits its reply."""

    name: str = "model"
    streaming: bool = False
    #: Tokens one request may hold, when the model knows (None: it does not say).
    context_window: int | None = None

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        async for delta in stream_response(await self.complete(request)):
            yield delta

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}{' streaming' if self.streaming else ''}>"
