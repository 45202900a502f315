"""A model-response cache, so re-running a sweep after changing one variant is cheap.

A reply is keyed by the model's identity (its class, name, endpoint and settings; never an
API key), the request's messages, tools and parameters (``tool_choice`` among them) and the
*repeat index*: repeats stay independent, and an unchanged variant re-run answers from the
cache. Memory only by default; ``ResponseCache(path)`` also appends to a JSONL file and
reads it back.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

from .._secrets import is_secret_name
from ..messages import parse_message
from ..models.base import Delta, ModelLike, ModelRequest, ModelResponse, Usage, stream_response

__all__ = ["CachedModel", "ResponseCache", "model_identity"]


def model_identity(model: Any) -> dict[str, Any]:
    """What tells two models apart for the cache: class, name and scalar settings.

    Functions count by their qualified name. A model whose replies depend on state its
    settings do not show (a script of replies) should define ``cache_identity()``. Attributes
    whose names say they hold a credential (the one secrets rule,
    :func:`agentnb._secrets.is_secret_name`) are never part of it.
    """
    own = getattr(model, "cache_identity", None)
    if callable(own):
        return {"class": type(model).__qualname__, "identity": own()}
    settings: dict[str, Any] = {}
    for name, value in sorted(vars(model).items()):
        if name.startswith("_") or is_secret_name(name):
            continue
        if isinstance(value, str | int | float | bool) or value is None:
            settings[name] = value
        elif isinstance(value, date | datetime):
            settings[name] = value.isoformat()
        elif callable(value):  # FunctionModel(fn): which function answers
            settings[name] = (
                f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
            )
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
    """Replies by request key; ``hits`` and ``misses`` count lookups."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._replies: dict[str, ModelResponse] = {}
        self.hits = 0
        self.misses = 0
        if self.path is not None and self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self._replies[entry["key"]] = _load(entry["response"])

    @staticmethod
    def key(model: Any, request: ModelRequest, repeat: int) -> str:
        body = [model_identity(model), request.messages, request.tools, request.params, repeat]
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

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
                line = {"key": key, "response": _dump(response)}
                f.write(json.dumps(line, ensure_ascii=False) + "\n")

    def __len__(self) -> int:
        return len(self._replies)

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"<ResponseCache {len(self)} replies{where}: {self.hits} hits, {self.misses} misses>"


class CachedModel:
    """``model`` answering from ``cache`` when it can (never streaming: evaluations need none)."""

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
        reply = self.cache.get(key)
        if reply is not None:
            self.hits += 1
            return reply
        reply = await self.model.complete(request)
        self.cache.put(key, reply)
        return reply

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        async for delta in stream_response(await self.complete(request)):
            yield delta

    def __repr__(self) -> str:
        return f"<CachedModel {self.name!r} repeat={self.repeat}>"
