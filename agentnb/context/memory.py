"""Long-term memory: facts and key tool results kept per user, across sessions (002 §2.2, §5.2).

A :class:`Memory` lives in a store (the same one as the sessions) under a user id. Facts are
saved explicitly (``memory.remember("常住上海")``); successful tool results are saved by the
``persist`` stage when the session has a memory (``save_tool_results=True``), compactly:
``search_weather {"city": "北京"} → {"condition": "晴", …}``.

Retrieval is deliberately simple and documented: the newest user message is cut into keys
(lower-cased Latin words and numbers, and every pair of adjacent CJK characters); each item
scores the number of keys it shares; the best ``limit`` items with a score of at least 1 are
sent, newest first among equals. They enter the request after the instructions as one marked
message, ``{"role": "system", "name": "agentnb_memory", "content": "Relevant memory: …"}``,
visible in ``RequestAssembled`` and the live view like any other message of the request.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigurationError
from ..messages import MEMORY_NAME, Message
from ..session.store import Store

__all__ = ["MEMORY_NAME", "Memory", "keys"]

_LATIN = re.compile(r"[a-z0-9]{2,}")
_CJK = re.compile(r"[\u3400-\u9fff]+")


def keys(text: str) -> set[str]:
    """The retrieval keys of a text: Latin words and numbers, and CJK character pairs."""
    found = set(_LATIN.findall(text.lower()))
    for run in _CJK.findall(text):
        found.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return found


class Memory:
    """A user's long-term memory in ``store``.

    Args:
        store: where items are kept (``SQLiteStore`` to survive the process).
        user: whose memory this is.
        limit: at most this many items enter a request.
        save_tool_results: keep each successful tool result when a run persists.
    """

    def __init__(
        self, store: Store, user: str, *, limit: int = 3, save_tool_results: bool = True
    ) -> None:
        if not isinstance(user, str) or not user.strip() or not user.isprintable():
            raise ConfigurationError(f"a memory's user is a printable, non-empty string: {user!r}")
        try:
            user.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigurationError(f"a memory's user must be valid text: {user!r}") from None
        self.store = store
        self.user = user
        self.limit = limit
        self.save_tool_results = save_tool_results

    def remember(self, text: str, *, kind: str = "fact", source: str | None = None) -> None:
        """Keep one item (skipped when the same text is already kept)."""
        if not isinstance(text, str) or not text.strip():
            raise ConfigurationError(f"a memory is a non-empty string, got {text!r}")
        if any(item["text"] == text for item in self.items()):
            return
        self.store.add_memory(
            self.user, {"kind": kind, "text": text, "source": source, "time": time.time()}
        )

    def items(self) -> list[dict[str, Any]]:
        """Every item, oldest first."""
        return self.store.memories(self.user)

    def recall(self, query: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The items that share the most keys with ``query`` (see the module docstring)."""
        wanted = keys(query)
        scored = [
            (len(wanted & keys(item["text"])), i, item)
            for i, item in enumerate(self.items())
            if isinstance(item.get("text"), str)  # skip what another writer stored wrongly
        ]
        best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], -s[1]))
        return [item for _, _, item in best[: self.limit if limit is None else limit]]

    def message(self, query: str) -> dict[str, Any] | None:
        """The marked message a request carries for ``query``, or None when nothing matches."""
        found = self.recall(query)
        if not found:
            return None
        lines = "\n".join(f"- ({item['kind']}) {item['text']}" for item in found)
        return {"role": "system", "name": MEMORY_NAME, "content": f"Relevant memory:\n{lines}"}

    def observe(self, messages: Sequence[Message], session_id: str | None = None) -> int:
        """Keep the successful tool results among ``messages``; returns how many were new."""
        if not self.save_tool_results:
            return 0
        calls = {
            c.id: c for m in messages for c in (getattr(m, "tool_calls", None) or ())
        }  # the arguments of each call, to say what a result answers
        before = len(self.items())
        for m in messages:
            if m.role != "tool" or not getattr(m, "ok", False):
                continue
            call = calls.get(getattr(m, "tool_call_id", ""))
            args = call.function.arguments if call else "{}"
            with contextlib.suppress(ValueError):  # shown as sent when it is not JSON
                args = json.dumps(json.loads(args), ensure_ascii=False)
            text = f"{getattr(m, 'name', None) or 'tool'} {args} → {m.text[:300]}"
            self.remember(text, kind="tool_result", source=session_id)
        return len(self.items()) - before

    def __repr__(self) -> str:
        return f"<Memory of {self.user!r} in {self.store!r}>"
