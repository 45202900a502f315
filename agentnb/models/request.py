"""The request of one model call, recorded by reference, and the diff of two requests."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from itertools import islice
from typing import Any

__all__ = ["ModelRequest", "RequestDiff"]


@dataclass(frozen=True, slots=True)
class RequestDiff:
    """What changed between two requests, message by message (``difflib`` over the history).

    Dropping the oldest message shows as one removal, not as every message changed.
    ``removed`` and ``added`` hold ``(index, message)`` pairs of the older and newer request.
    """

    common: int
    kept: int
    removed: list[tuple[int, dict[str, Any]]]
    added: list[tuple[int, dict[str, Any]]]
    instructions_changed: bool
    tools_changed: bool
    params_changed: dict[str, tuple[Any, Any]]

    def __repr__(self) -> str:
        bits = [f"kept={self.kept}", f"+{len(self.added)} messages"]
        if self.removed:
            bits.append(f"-{len(self.removed)} messages")
        if self.instructions_changed:
            bits.append("instructions changed")
        if self.tools_changed:
            bits.append("tools changed")
        if self.params_changed:
            bits.append(f"params changed: {sorted(self.params_changed)}")
        return f"RequestDiff({', '.join(bits)})"


def _key(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)


def _split_system(messages: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, int]:
    if messages and messages[0].get("role") in ("system", "developer"):
        return messages[0], 1
    return None, 0


class ModelRequest:
    """The exact request of one model call, in the Chat Completions shape.

    ``messages`` and ``tools`` are the wire dicts the model receives, shared with the
    session's cached messages: treat them as read only (``to_openai()`` copies).

    A request the runtime assembles is recorded *by reference*: the instructions, the
    transcript's message list and the spans of it that were sent. ``messages`` is rebuilt
    from them on access (and held while the model call runs), so keeping every request of a
    long session costs memory linear in the session, not quadratic.
    """

    __slots__ = ("_cache", "_head", "_held", "_source", "_spans", "estimate", "params", "tools")

    def __init__(
        self,
        messages: list[dict[str, Any]] | None = None,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        *,
        head: tuple[dict[str, Any], ...] = (),
        source: list[dict[str, Any]] | None = None,
        spans: tuple[tuple[int, int], ...] = (),
    ) -> None:
        if messages is not None:
            source, spans, head = list(messages), ((0, len(messages)),), ()
        self._head = head
        self._source: list[dict[str, Any]] = source if source is not None else []
        self._spans = spans
        self._cache: list[dict[str, Any]] | None = None
        self._held = False
        self.tools: list[dict[str, Any]] = tools if tools is not None else []
        self.params: dict[str, Any] = params if params is not None else {}
        #: The prompt's token estimate from ``assemble`` (used when a reply reports no usage).
        self.estimate = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages sent, in order: built on first access (once while the call runs)."""
        if self._cache is not None:
            return self._cache
        out = list(self._head)
        source = self._source
        for a, b in self._spans:
            out.extend(islice(source, a, b))
        if self._held:
            self._cache = out
        return out

    def hold(self) -> None:
        """While a model call runs, ``messages`` is built at most once (the runtime calls this)."""
        self._held = True

    def release(self) -> None:
        self._held = False
        self._cache = None

    @property
    def system(self) -> dict[str, Any] | None:
        """The instructions message of the request, without building the message list."""
        first = self._head[0] if self._head else (self._source[0] if self._source else None)
        return first if first is not None and first.get("role") in ("system", "developer") else None

    @property
    def size(self) -> int:
        """How many messages the request carries (without building them)."""
        spans = self._spans
        if len(spans) == 1:
            ((a, b),) = spans
            return len(self._head) + b - a
        return len(self._head) + sum(b - a for a, b in spans)

    def to_openai(self) -> dict[str, Any]:
        """The request body (without ``model``), as a fresh JSON-ready dict."""
        body: dict[str, Any] = {"messages": json.loads(json.dumps(self.messages))}
        if self.tools:
            body["tools"] = json.loads(json.dumps(self.tools))
        body.update(self.params)
        return body

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelRequest):
            return NotImplemented
        return (self.messages, self.tools, self.params) == (
            other.messages,
            other.tools,
            other.params,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<ModelRequest {self.size} messages, {len(self.tools)} tools, params={self.params}>"

    def diff(self, newer: ModelRequest) -> RequestDiff:
        """Compare with a later request: which messages were kept, added, removed."""
        a, b = self.messages, newer.messages
        sys_a, skip_a = _split_system(a)
        sys_b, skip_b = _split_system(b)
        ka = [_key(m) for m in a[skip_a:]]
        kb = [_key(m) for m in b[skip_b:]]
        common = 0
        while common < min(len(a), len(b)) and (a[common] is b[common] or a[common] == b[common]):
            common += 1
        matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
        removed: list[tuple[int, dict[str, Any]]] = []
        added: list[tuple[int, dict[str, Any]]] = []
        kept = 0
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                kept += i2 - i1
                continue
            removed += [(skip_a + i, a[skip_a + i]) for i in range(i1, i2)]
            added += [(skip_b + j, b[skip_b + j]) for j in range(j1, j2)]
        keys = set(self.params) | set(newer.params)
        params = {
            k: (self.params.get(k), newer.params.get(k))
            for k in sorted(keys)
            if self.params.get(k) != newer.params.get(k)
        }
        return RequestDiff(
            common=common,
            kept=kept,
            removed=removed,
            added=added,
            instructions_changed=sys_a != sys_b,
            tools_changed=self.tools != newer.tools,
            params_changed=params,
        )
