"""ScriptedModel: a model that plays back a fixed list of replies, for tests and lessons."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from ..errors import ScriptNotConsumed, UnexpectedModelCall
from .base import Delta, Model, ModelRequest, ModelResponse, coerce_response, stream_response

__all__ = ["ScriptedModel"]


class ScriptedModel(Model):
    """Replies in order, one per call; fails loudly when called past the end.

    Each reply is an OpenAI assistant-message dict, an ``AssistantMessage``, a string (a
    text answer), a ``ModelResponse``, or an exception to raise at that call. Replies are
    validated when the script is built, so a typo fails here rather than mid-run.
    Every request is recorded in ``.requests``; ``assert_complete()`` checks none is left.
    With ``stream=True`` replies arrive as deltas of ``chunk_size`` characters.
    """

    def __init__(
        self,
        replies: Iterable[Any],
        *,
        stream: bool = False,
        name: str = "scripted",
        chunk_size: int = 12,
    ) -> None:
        self.name = name
        self.streaming = stream
        self.chunk_size = chunk_size
        self._script: list[ModelResponse | BaseException] = [
            r if isinstance(r, BaseException) else coerce_response(r, name) for r in replies
        ]
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        """How many replies have not been requested yet."""
        return len(self._script) - len(self.requests)

    def _next(self, request: ModelRequest) -> ModelResponse:
        index = len(self.requests)
        if index >= len(self._script):
            last = request.messages[-1] if request.messages else {}
            raise UnexpectedModelCall(
                f"ScriptedModel {self.name!r} ran out of replies: it has {len(self._script)}, and "
                f"this is call #{index + 1}. The request ended with a {last.get('role', '?')!r} "
                f"message: {str(last.get('content'))[:120]!r}. Add a reply to the script."
            )
        self.requests.append(request)
        reply = self._script[index]
        if isinstance(reply, BaseException):
            raise reply
        return reply

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self._next(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        async for delta in stream_response(self._next(request), self.chunk_size):
            yield delta

    def assert_complete(self) -> None:
        """Raise :class:`~agentnb.errors.ScriptNotConsumed` if replies were left unused."""
        if self.remaining:
            raise ScriptNotConsumed(
                f"ScriptedModel {self.name!r}: {self.remaining} of {len(self._script)} replies "
                f"were never requested (the run stopped after {len(self.requests)} model calls)"
            )

    def __repr__(self) -> str:
        return (
            f"<ScriptedModel {self.name!r} {len(self.requests)}/{len(self._script)} replies used>"
        )
