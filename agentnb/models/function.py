"""FunctionModel: a model whose replies come from your function of the request."""

from __future__ import annotations

import copy
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

    **The run's seed.** A function with a ``seed`` parameter gets it: ``def reply(request,
    seed): ...``. ``an.evaluate`` gives every run the seed of its (task, repeat) — the same
    for every variant, so the runs it pairs share their randomness — by calling
    :meth:`with_seed` (as it does for any model that has it); outside an evaluation ``seed``
    is the one given here (None by default). Seed a ``random.Random(seed)`` with it and a
    sampled reply reproduces run by run.

    ``requests`` holds the last ``keep_requests`` requests it was asked, newest last (``None``
    keeps them all), the reseeded copies' included. Bounded by default: a request holds its
    session's messages by reference, so a model kept for a long sweep would otherwise keep
    every session of it alive.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        stream: bool = False,
        name: str | None = None,
        chunk_size: int = 12,
        keep_requests: int | None = 100,
        seed: int | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or str(getattr(fn, "__name__", "function"))
        self.streaming = stream
        self.chunk_size = chunk_size
        #: The seed ``fn`` gets when it has a ``seed`` parameter (see the class docstring).
        self.seed = seed
        self.requests: deque[ModelRequest] = deque(maxlen=keep_requests)
        self._async = inspect.iscoroutinefunction(fn)
        self._seeded = _takes_seed(fn)

    def with_seed(self, seed: int) -> FunctionModel:
        """This model for one run seeded ``seed`` (what ``an.evaluate`` calls per run): a copy
        with the same function and settings, sharing ``requests`` with this one."""
        other = copy.copy(self)
        other.seed = seed
        return other

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        args = {"seed": self.seed} if self._seeded else {}
        if self._async:
            reply = await self.fn(request, **args)
        else:
            reply = self.fn(request, **args)
            if inspect.isawaitable(reply):  # a sync function that returned an awaitable
                reply = await reply
        return coerce_response(reply, self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        async for delta in stream_response(await self.complete(request), self.chunk_size):
            yield delta


def _takes_seed(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` has a parameter named ``seed`` (it is then passed by name)."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or a C callable: no signature to read
        return False
    seed = parameters.get("seed")
    return seed is not None and seed.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
