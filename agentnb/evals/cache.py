"""A model-response cache, so re-running a sweep after changing one variant is cheap.

A reply is keyed by the model's identity (:func:`model_identity`: everything that can change
a reply, never a credential), the request's messages, tools and parameters (``tool_choice``
among them) and the *repeat index*: repeats stay independent, and an unchanged variant re-run
answers from the cache. A model whose identity cannot be known is never cached. Memory only
by default; ``ResponseCache(path)`` also appends to a JSONL file and reads it back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import marshal
import os
import types
from collections.abc import AsyncIterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

from .. import _json
from .._secrets import is_secret_name
from ..messages import parse_message
from ..models.base import Delta, ModelLike, ModelRequest, ModelResponse, Usage, stream_response
from .checks.source import plain
from .identity import BOOKKEEPING

__all__ = ["CachedModel", "ResponseCache", "model_identity"]


#: Settings of how a reply is fetched, not of what it says (OpenAI-compatible models).
_TRANSPORT = frozenset(("timeout", "total_timeout", "retry", "max_response_bytes", "secrets"))


def _value(value: Any) -> Any:
    """A value's part in a cache key: plain data (scalars, and containers of nothing else)
    as itself, a function by its code and what it closes over, anything else (a list of
    requests a test keeps, a dataset, a client) by its identity in this process: never equal
    to another object's, so two models never share replies by accident; such a key misses
    in another process, which is safe."""
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, tuple) and plain(list(value)):
        return list(value)
    if plain(value):
        return value
    if isinstance(value, types.FunctionType | types.MethodType):
        fn = value.__func__ if isinstance(value, types.MethodType) else value
        bound = _value(value.__self__) if isinstance(value, types.MethodType) else None
        cells = [_value(c.cell_contents) for c in fn.__closure__ or ()]
        # marshal version 2: no back-references, which later versions write or not by the
        # objects' reference counts (the same code hashed two ways as a run went on)
        code = hashlib.sha256(marshal.dumps(fn.__code__, 2)).hexdigest()[:16]
        return {
            "fn": f"{fn.__module__}.{fn.__qualname__}",
            "code": code,
            "closure": cells,
            "defaults": _value(fn.__defaults__),
            "self": bound,
        }
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _value(v) for k, v in value.items()} if len(value) < 64 else _id(value)
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
    by its identity in this process. Credentials are never part of it: attributes whose
    names say they hold one (the one secrets rule, :func:`agentnb._secrets.is_secret_name`)
    are left out, and headers are kept as the client masks them. A model whose attributes
    cannot be read (``__slots__``, no ``cache_identity``) has no identity: None, not cached.
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
    settings: dict[str, Any] = {}
    for name, value in sorted(attributes.items()):
        bare = name.lstrip("_")
        if bare in BOOKKEEPING or is_secret_name(bare) or (openai_like and bare in _TRANSPORT):
            continue
        if openai_like and name.startswith("_"):  # its client, transport and probes
            continue
        settings[name] = _value(value)
    return {"class": f"{type(model).__module__}.{type(model).__qualname__}", **settings}


def _dump(response: ModelResponse) -> dict[str, Any]:
    usage = response.usage
    return {
        "message": response.message.to_openai(),
        "usage": None
        if usage is None
        else [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.estimated],
        "finish_reason": response.finish_reason,
        "model": response.model,
    }


def _load(data: dict[str, Any]) -> ModelResponse:
    usage = data.get("usage")
    return ModelResponse(
        parse_message(data["message"]),  # type: ignore[arg-type]
        Usage(*usage) if usage else None,
        data.get("finish_reason"),
        data.get("model"),
    )


class ResponseCache:
    """Replies by request key; ``hits`` and ``misses`` count lookups, ``uncached`` the calls
    of models whose identity cannot be known (never cached). A cache file's lines are
    written by the one character rule (:mod:`agentnb._json`) and split on ``\\n`` only; a
    line that cannot be read is skipped and listed in ``bad_lines`` (``(line, why)``), so
    one torn line never makes the cache unusable."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._replies: dict[str, ModelResponse] = {}
        self.hits = 0
        self.misses = 0
        self.uncached = 0
        #: Lines of the file that could not be read: ``(line number, why)``.
        self.bad_lines: list[tuple[int, str]] = []
        if self.path is not None and self.path.exists():
            text = self.path.read_bytes().decode("utf-8", "replace")
            for number, line in enumerate(text.split("\n"), 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    self._replies[str(entry["key"])] = _load(entry["response"])
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    self.bad_lines.append((number, f"{type(exc).__name__}: {exc}"[:200]))

    @staticmethod
    def key(model: Any, request: ModelRequest, repeat: int) -> str | None:
        """The key of ``request`` to ``model`` on ``repeat``; None when the model's identity
        cannot be known (then it is never cached)."""
        identity = model_identity(model)
        if identity is None:
            return None
        body = [identity, request.messages, request.tools, request.params, repeat]
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str) -> ModelResponse | None:
        reply = self._replies.get(key)
        if reply is None:
            self.misses += 1
        else:
            self.hits += 1
        return reply

    def put(self, key: str, response: ModelResponse) -> None:
        self._replies[key] = response
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(_json.dumps({"key": key, "response": _dump(response)}) + "\n")

    def __len__(self) -> int:
        return len(self._replies)

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
