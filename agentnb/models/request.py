"""The request of one model call, recorded by reference, and the diff of two requests."""

from __future__ import annotations

import copy
import difflib
import json
from dataclasses import dataclass
from typing import Any

from .. import _fast
from .output import OutputSpec

__all__ = ["ModelRequest", "RequestDiff", "Sent", "WireList"]


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


def _sum(spans: tuple[tuple[int, int], ...]) -> int:
    return sum(b - a for a, b in spans)


class WireList(list[dict[str, Any]]):
    """``request.messages``: a list of wire dicts that refuses changes (it is shared by the
    requests of a session). ``list(request.messages)`` is a copy of your own."""

    __slots__ = ("__weakref__",)  # a client may follow it without holding it

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "request.messages is read only (the requests of a session share it); "
            "copy it first: messages = list(request.messages)"
        )

    append = extend = insert = pop = remove = clear = sort = reverse = _read_only
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only

    def __copy__(self) -> list[dict[str, Any]]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[dict[str, Any]]:
        return copy.deepcopy(list(self), memo)

    def __reduce__(self) -> tuple[Any, ...]:  # pickles as a plain list
        return (list, (list(self),))


class Sent:
    """The messages a session's requests send, built once and grown as the session grows.

    Requests that send ``[*head, *source[:n]]`` with the same ``head`` and the same
    ``source`` list (the transcript's wire dicts, which only grow until a rewrite replaces
    them) share one list: the latest request's ``messages`` costs what the new messages cost,
    not the whole session. The list grows in place only when nothing else holds it
    (:func:`agentnb._fast.extended`): a model that kept an earlier request's list keeps it
    exactly as that request sent it.
    """

    __slots__ = ("head", "items", "source")

    def __init__(self, head: tuple[dict[str, Any], ...], source: list[dict[str, Any]]) -> None:
        self.head = head
        self.source = source
        self.items = WireList(head)

    def upto(self, n: int) -> WireList:
        """The first ``n`` messages: the shared list itself when it holds exactly those."""
        have = len(self.items)
        if have < n:
            skip = len(self.head)
            self.items = _fast.extended(self.items, self.source[have - skip : n - skip])
        elif have > n:  # an earlier request, read later: its own copy
            return WireList(self.items[:n])
        return self.items


class ModelRequest:
    """The exact request of one model call, in the Chat Completions shape.

    ``messages`` and ``tools`` are the wire dicts the model receives, shared with the
    session's cached messages: read only (``to_openai()`` copies).

    A request the runtime assembles is recorded *by reference*: ``head`` (the instructions
    and any message a context policy inserted), ``source`` (the transcript's list of wire
    dicts) and ``spans``, the ranges of it that were sent. Keeping every request of a long
    session costs memory linear in the session, not quadratic. ``messages`` is built from
    them: a request that sends the whole history after its head shares one growing list with
    the session's other such requests (:class:`Sent`), so reading it costs what the new
    messages cost; any other request builds its list on access (once while its call runs).
    """

    __slots__ = (
        "_cache",
        "_held",
        "_sent",
        "estimate",
        "head",
        "output",
        "params",
        "shared",
        "size",
        "source",
        "spans",
        "tools",
    )

    def __init__(
        self,
        messages: list[dict[str, Any]] | None = None,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        *,
        head: tuple[dict[str, Any], ...] = (),
        source: list[dict[str, Any]] | None = None,
        spans: tuple[tuple[int, int], ...] = (),
        after: ModelRequest | None = None,
        output: OutputSpec | None = None,
    ) -> None:
        if messages is not None:
            source, spans, head = list(messages), ((0, len(messages)),), ()
        #: The messages sent before the history: the instructions, inserted ones (read only).
        self.head = head
        #: The list of wire dicts the history was sent from (read only).
        self.source: list[dict[str, Any]] = source if source is not None else []
        #: The half-open ranges of ``source`` that were sent, in order.
        self.spans = spans
        one_span = len(spans) == 1
        #: How many messages the request carries.
        self.size = len(head) + (spans[0][1] - spans[0][0] if one_span else _sum(spans))
        self.tools: list[dict[str, Any]] = tools if tools is not None else []
        self.params: dict[str, Any] = params if params is not None else {}
        if output is None and params and ("response_format" in params or "text" in params):
            output = OutputSpec.from_params(params)  # read off the wire (params stay as sent)
        #: The answer format asked for (``Agent(output_type=...)``; a request read off the wire
        #: gets it from its ``response_format`` / ``text.format``), or None. Each model client
        #: writes it its API's way (:mod:`agentnb.models.output`); a field the params already
        #: carry is sent as it is.
        self.output = output
        #: The prompt's token estimate from ``assemble`` (used when a reply reports no usage).
        self.estimate = 0
        self._cache: WireList | None = None
        self._held = False
        self._sent: Sent | None = None
        #: Whether ``messages`` is the list shared with the session's other requests.
        self.shared = one_span and spans[0][0] == 0  # the whole history from its start
        if self.shared:
            sent = after._sent if after is not None else None
            if sent is None or sent.source is not self.source or sent.head != head:
                sent = Sent(head, self.source)  # a new history, or a new head: a list of its own
            self._sent = sent

    @property
    def messages(self) -> WireList:
        """The messages sent, in order (a read-only list; see the class)."""
        sent = self._sent
        if sent is not None:
            return sent.upto(self.size)
        if self._cache is not None:
            return self._cache
        out = WireList(self.head)
        source = self.source
        for a, b in self.spans:
            list.extend(out, source[a:b])
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
        first = self.head[0] if self.head else (self.source[0] if self.source else None)
        return first if first is not None and first.get("role") in ("system", "developer") else None

    def to_openai(self) -> dict[str, Any]:
        """The request body (without ``model``), as a fresh JSON-ready dict."""
        body: dict[str, Any] = {"messages": json.loads(json.dumps(self.messages))}
        if self.tools:
            body["tools"] = json.loads(json.dumps(self.tools))
        body.update(self.params)
        if self.output is not None and "response_format" not in body:
            body["response_format"] = json.loads(json.dumps(self.output.chat()))
        return body

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelRequest):
            return NotImplemented
        return (self.messages, self.tools, self.params, self.output) == (
            other.messages,
            other.tools,
            other.params,
            other.output,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        out = "" if self.output is None else f", output={self.output.name!r}"
        return (
            f"<ModelRequest {self.size} messages, {len(self.tools)} tools, "
            f"params={self.params}{out}>"
        )

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
        if self.output != newer.output:  # the answer format is part of what the model saw
            params["output"] = (self.output, newer.output)
        return RequestDiff(
            common=common,
            kept=kept,
            removed=removed,
            added=added,
            instructions_changed=sys_a != sys_b,
            tools_changed=self.tools != newer.tools,
            params_changed=params,
        )
