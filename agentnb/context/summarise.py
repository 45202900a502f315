"""Summarising the oldest history instead of dropping it (002 §2.2, §5.2; 000 §3.3).

:class:`SummariseOldest` is a context policy: when the history does not fit the window, the
oldest turn groups that would be dropped are replaced by one marked message,
``{"role": "system", "name": "agentnb_summary", "content": "Summary of messages #0-#11: …"}``,
placed after the instructions. The summariser is itself a model behind the same protocol
(:class:`ModelSummariser`), or :class:`DeterministicSummariser` offline: it keeps what the user
asked, what each tool returned (compactly) and what the assistant answered, in order.

Summaries are cached by the content they summarise (a hash of the summarised messages' wire
JSON), so a long run pays for each summary once, one agent serving many users never hands one
user's summary to another, and an edit (a redacted message) makes a new summary. The cache
is bounded (:attr:`SummariseOldest.cache_size`, least recently used first out).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from .. import _json
from ..errors import AgentnbError, ModelCallFailed
from ..messages import RUNTIME_NAME, SUMMARY_NAME, Message, content_text
from ..models.base import ModelLike, ModelRequest, coerce_response
from ..tokens import estimate_tokens
from .policies import Budget, Selection, oldest_to_drop

__all__ = ["DeterministicSummariser", "ModelSummariser", "SummariseOldest", "Summariser"]


@runtime_checkable
class Summariser(Protocol):
    name: str

    async def summarise(self, messages: Sequence[dict[str, Any]]) -> str: ...


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


class DeterministicSummariser:
    """Offline and reproducible: one line per user request, tool result and answer."""

    name = "deterministic"

    def __init__(self, width: int = 120) -> None:
        self.width = width

    async def summarise(self, messages: Sequence[dict[str, Any]]) -> str:
        lines = []
        for m in messages:
            role, text = m.get("role"), content_text(m.get("content"))
            calls = [c.get("function", {}) for c in m.get("tool_calls") or ()]
            if role == "assistant" and calls:
                called = ", ".join(f"{f.get('name')}({f.get('arguments')})" for f in calls)
                lines.append(f"- assistant called {_short(called, self.width)}")
            if role == "user" and m.get("name") != RUNTIME_NAME:
                lines.append(f"- user asked: {_short(text or '', self.width)}")
            elif role == "tool":
                tool = m.get("name") or "tool"
                lines.append(f"- {tool} returned: {_short(text or '', self.width)}")
            elif role == "assistant" and text:
                lines.append(f"- assistant answered: {_short(text, self.width)}")
        return "\n".join(lines) or "- (nothing to keep)"

    def __repr__(self) -> str:
        return "DeterministicSummariser()"


class ModelSummariser:
    """Asks a model (any agentnb model) for the summary, in the conversation's language."""

    name = "model"

    PROMPT = (
        "Summarise the conversation below for an assistant that will continue it. Keep every "
        "fact it may need: what the user wants, cities, dates, budgets, prices and results "
        "from tools. Write short bullet points in the conversation's language."
    )

    def __init__(self, model: ModelLike, prompt: str | None = None) -> None:
        self.model = model
        self.prompt = prompt or self.PROMPT

    async def summarise(self, messages: Sequence[dict[str, Any]]) -> str:
        transcript = "\n".join(
            f"{m.get('role')}: {m.get('content') or json.dumps(m.get('tool_calls'))}"
            for m in messages
        )
        request = ModelRequest(
            [{"role": "system", "content": self.prompt}, {"role": "user", "content": transcript}]
        )
        try:
            response = await self.model.complete(request)
        except AgentnbError:
            raise
        except Exception as exc:
            name = getattr(self.model, "name", type(self.model).__name__)
            raise ModelCallFailed(
                f"the summariser's model {name!r} raised {type(exc).__name__}: {exc}"
            ) from exc
        return coerce_response(response).message.text.strip()

    def __repr__(self) -> str:
        return f"ModelSummariser({getattr(self.model, 'name', self.model)!r})"


def _fit(text: str, tokens: int) -> str:
    """The leading whole lines of ``text`` that fit in ``tokens`` (a cut line ends in …)."""
    kept: list[str] = []
    for line in text.split("\n"):
        need = estimate_tokens(line)
        if need > tokens:
            if not kept:
                kept.append(line[: 2 * max(tokens, 1)] + "…")
            break
        kept.append(line)
        tokens -= need
    return "\n".join(kept)


class SummariseOldest:
    """Replace the oldest messages that do not fit by one marked summary message.

    ``reserve`` tokens of the window are kept for the summary; a longer summary is cut to it,
    so a summarised request never overflows.
    """

    name = "summarise_oldest"

    def __init__(
        self, summariser: Summariser | None = None, *, reserve: int = 200, cache_size: int = 256
    ) -> None:
        self.summariser = summariser or DeterministicSummariser()
        self.reserve = reserve
        self.cache_size = cache_size
        self._cache: OrderedDict[str, str] = OrderedDict()

    async def select(self, history: Sequence[Message], budget: Budget) -> Selection:
        n, end = len(history), oldest_to_drop(history, budget, spare=self.reserve)
        if not end:
            return Selection.everything(n)
        text = await self._summary(history, end)
        head = f"Summary of messages #0-#{end - 1} (older history, summarised to fit the window):"
        summary = {"role": "system", "name": SUMMARY_NAME, "content": f"{head}\n{text}"}
        note = f"summarised the {end} oldest messages with {self.summariser.name}"
        return Selection(
            ((end, n),) if end < n else (), (summary,), summarised=((0, end),), note=note
        )

    async def _summary(self, history: Sequence[Message], end: int) -> str:
        wires = [m.wire() for m in history[:end]]
        key = _content_key(wires)  # the same messages, word for word: summarised once
        text = self._cache.get(key)
        if text is not None:
            self._cache.move_to_end(key)
            return text
        text = await self.summariser.summarise(wires)
        if not isinstance(text, str):
            raise ModelCallFailed(
                f"the summariser {self.summariser!r} returned {type(text).__name__}, not text"
            )
        self._cache[key] = text = _fit(text, self.reserve - 30)
        while len(self._cache) > max(self.cache_size, 0):
            self._cache.popitem(last=False)
        return text

    def __repr__(self) -> str:
        return f"SummariseOldest({self.summariser!r})"


def _content_key(wires: Sequence[dict[str, Any]]) -> str:
    text = _json.dumps(list(wires), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
