"""A model-response cache, so re-running a sweep after changing one variant is cheap.

The cache is a recording of replies (:mod:`agentnb.models.recorded`, the one format a model
call is answered from, which cassettes and ``an.testing.replay`` share), keyed **by request
and repeat**: the model's identity (:func:`model_identity`: everything that can change a
reply, never a credential), the request's messages, tools and parameters (``tool_choice``
among them) and the *repeat index*: repeats stay independent, and an unchanged variant re-run
answers from the cache. A model whose identity cannot be known is never cached. Memory only
by default; ``ResponseCache(path)`` also appends to a JSONL file and reads it back (files
written before this format, with ``usage`` as a list, read the same).
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import AsyncIterator
from datetime import date, datetime
from typing import Any

from ..models import (
    Delta,
    ModelLike,
    ModelRequest,
    ModelResponse,
    Replies,
    Secrets,
    by_repeat,
    reply_dict,
    reply_of,
    stream_response,
)
from .checks.source import plain
from .identity import BOOKKEEPING, code_digest

__all__ = ["CachedModel", "ResponseCache", "model_identity"]


#: Settings of how a reply is fetched, not of what it says (OpenAI-compatible models).
_TRANSPORT = frozenset(("timeout", "total_timeout", "retry", "max_response_bytes", "secrets"))


def _value(value: Any, mask: Secrets | None = None) -> Any:
    """A value's part in a cache key: plain data (scalars, and containers of nothing else)
    as itself (credentials in its strings masked by ``mask``), a function by its code and
    what it closes over, anything else (a list of requests a test keeps, a dataset, a client)
    by its identity in this process: never equal to another object's, so two models never
    share replies by accident; such a key misses in another process, which is safe."""
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, tuple) and plain(list(value)):
        value = list(value)
    if plain(value):
        return mask.mask_data(value) if mask else value
    if isinstance(value, types.FunctionType | types.MethodType):
        fn = value.__func__ if isinstance(value, types.MethodType) else value
        bound = _value(value.__self__, mask) if isinstance(value, types.MethodType) else None
        cells = [_value(c.cell_contents, mask) for c in fn.__closure__ or ()]
        code = code_digest(fn.__code__)
        return {
            "fn": f"{fn.__module__}.{fn.__qualname__}",
            "code": code,
            "closure": cells,
            "defaults": _value(fn.__defaults__, mask),
            "self": bound,
        }
    if isinstance(value, dict) and all(isinstance(k, str) for k in value) and len(value) < 64:
        return {k: _value(v, mask) for k, v in value.items()}
    return _id(value)


def _id(value: Any) -> str:
    return f"{type(value).__qualname__}@{id(value):x}"


def model_identity(model: Any) -> dict[str, Any] | None:
    """What tells two models apart for the cache: everything that can change a reply.

    A model's own ``cache_identity()`` when it has one (None: never cache it); else its
    class and every attribute but bookkeeping (``requests``...) and the transport settings of
    an OpenAI-compatible client (timeouts, retries): scalars and containers by value
    (``params``, ``headers``: two variants that differ in temperature or a header never share
    a reply), functions by their code and closure (``FunctionModel(fn)``), any other object
    by its identity in this process. Every setting counts whatever its name (``max_tokens``,
    ``key_prefix``); only credential *values* are kept out: the model's registered
    :class:`~agentnb._secrets.Secrets` are left out and mask every string of the other
    settings (headers are kept as the client masks them). A model whose attributes cannot be
    read (``__slots__``, no ``cache_identity``) has no identity: None, not cached.
    """
    own = getattr(model, "cache_identity", None)
    if callable(own):
        mine = own()
        return None if mine is None else {"class": type(model).__qualname__, "identity": mine}
    try:
        attributes = vars(model)
    except TypeError:
        return None
    openai_like = hasattr(model, "base_url") and hasattr(model, "params")
    own = [v for v in attributes.values() if isinstance(v, Secrets)]
    mask = Secrets([value for s in own for value in s.values]) if own else None
    settings: dict[str, Any] = {}
    for name, value in sorted(attributes.items()):
        bare = name.lstrip("_")
        if (
            bare in BOOKKEEPING
            or isinstance(value, Secrets)
            or (openai_like and bare in _TRANSPORT)
        ):
            continue
        if openai_like and name.startswith("_"):  # its client, transport and probes
            continue
        settings[name] = _value(value, mask)
    return {"class": f"{type(model).__module__}.{type(model).__qualname__}", **settings}


def _reply(entry: dict[str, Any]) -> dict[str, Any]:
    reply_of(entry["response"])  # a line whose reply cannot be read is refused at load
    return entry


class ResponseCache:
    """Replies by request key (:class:`~agentnb.models.recorded.Replies`); ``hits`` and
    ``misses`` count lookups, ``uncached`` the calls of models whose identity cannot be known
    (never cached). A cache file's lines are written by the one character rule
    (:mod:`agentnb._json`) and split on ``\\n`` only; a line that cannot be read is skipped
    and listed in ``bad_lines`` (``(line, why)``), so one torn line never makes the cache
    unusable."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.replies = Replies(path, strict=False, check=_reply, what="cached reply")
        self.path = self.replies.path
        self.hits = 0
        self.misses = 0
        self.uncached = 0

    @property
    def bad_lines(self) -> list[tuple[int, str]]:
        """Lines of the file that could not be read: ``(line number, why)``."""
        return self.replies.bad_lines

    @staticmethod
    def key(model: Any, request: ModelRequest, repeat: int) -> str | None:
        """The key of ``request`` to ``model`` on ``repeat``; None when the model's identity
        cannot be known (then it is never cached)."""
        identity = model_identity(model)
        if identity is None:
            return None
        return by_repeat([identity, request.messages, request.tools, request.params], repeat)

    def get(self, key: str) -> ModelResponse | None:
        entry = self.replies.find(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        return reply_of(entry["response"])

    def put(self, key: str, response: ModelResponse) -> None:
        self.replies.add({"key": key, "response": reply_dict(response)})

    def __len__(self) -> int:
        return len(self.replies.keys())

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        bad = f", {len(self.bad_lines)} unreadable lines skipped" if self.bad_lines else ""
        return (
            f"<ResponseCache {len(self)} replies{where}: {self.hits} hits, {self.misses} "
            f"misses, {self.uncached} uncached{bad}>"
        )


class CachedModel:
    """``model`` answering from ``cache`` when it can, each reply the cache gave marked
    ``cached=True`` (whole, and on the last fragment when streamed): the run's record counts
    those calls apart and never bills them. Never streaming itself: evaluations need none."""

    streaming = False

    def __init__(self, model: ModelLike, cache: ResponseCache, repeat: int = 0) -> None:
        self.model = model
        self.cache = cache
        self.repeat = repeat
        self.name = model.name
        self.hits = 0
        own = getattr(model, "tokenizer", None)
        if own is not None:
            self.tokenizer = own
        #: The wrapped model's window, so an agent that adopts its model's (the local server's
        #: 4096) trims its requests the same with the cache in front (issue 36).
        self.context_window: int | None = getattr(model, "context_window", None)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        key = self.cache.key(self.model, request, self.repeat)
        if key is None:  # a model whose identity cannot be known is not cached
            self.cache.uncached += 1
            return await self.model.complete(request)
        reply = self.cache.get(key)
        if reply is not None:  # marked: the run counts it apart, and never bills it
            self.hits += 1
            return dataclasses.replace(reply, cached=True)
        reply = await self.model.complete(request)
        self.cache.put(key, reply)
        return reply

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        async for delta in stream_response(await self.complete(request)):
            yield delta

    def __repr__(self) -> str:
        return f"<CachedModel {self.name!r} repeat={self.repeat}>"
