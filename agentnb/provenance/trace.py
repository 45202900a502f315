"""Where each value came from: every tool-call argument and every figure of an answer, traced.

A value's *sources* are the places it can be read in what the model had before it wrote it:

* ``user[k]`` - what the user said in message ``k``;
* ``instructions`` - the system prompt and the tool schemas of the request that produced it
  (a default, an enum, an example in a description);
* ``memory`` - a recalled memory message (``agentnb_memory``);
* ``tool_result[call_id]`` - a tool's result, with the JSON path and span of the match, and
  the instruction found there when the span lies in one (:mod:`.detector`).

A value found nowhere is ``invented``. Matching goes through the one normaliser
(:mod:`.normal`): strings folded (case, width, punctuation), numbers by value, dates by the
day they name. A value found whole has confidence 1.0 (0.5 for a bare number below 10: counts
are everywhere; 0.9 a date without its year, 0.6 a weekday only); a text composed of pieces
found in different places has the share of its words (and of a Chinese run's character pairs)
found, times 0.8, and is ``invented`` below half. Flags and nulls (``true``, ``false``,
``null``) and empty strings are choices, not values: they are not traced.

A value is *steered* when every source it has is a flagged span: the model could only have
read it in an instruction found in data (:func:`agentnb.checks.not_steered`).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from .figures import ENTITY, figures
from .match import match, order, traced
from .pieces import Piece, Pool, data_pieces
from .sources import Flagged, Source, Value, leaves, text_of

__all__ = ["Head", "Tracer", "trace"]

MEMORY_NAME = "agentnb_memory"
RUNTIME_NAME = "agentnb"
_TODAY = re.compile(
    r"(?:今天是|今日是|today is|current date(?: is)?:?|the date is)\s*(\d{4}-\d{2}-\d{2})",
    re.IGNORECASE,
)


# -- the tracer ----------------------------------------------------------------------------
Head = Callable[[int], tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]]]


class Tracer:
    """Reads a conversation message by message, keeping what each next value may come from.

    ``head(i)`` gives the instructions and memory messages and the tool schemas of the request
    that produced assistant message ``i`` (the session's records); ``today`` resolves relative
    dates (else read from the instructions when they say "今天是 2025-01-06", else weekdays
    only). :meth:`add` returns a message's values and flags; the view feeds it live.

    ``steered_only``: keep only the values that can be steered, each traced in full, so their
    ``steered`` and sources are exact while the rest go untraced. A value is steered only when
    every source it has is flagged, and each piece is matched on its own, so a value with no
    source among the flagged pieces is not steered: a look among the few flagged pieces spares
    the search of all of them (what a transcript's static HTML marks, over a long session's
    thousands of results)."""

    def __init__(
        self,
        head: Head | None = None,
        today: date | None = None,
        tools: Iterable[str] = (),
        *,
        claims: bool = True,
        steered_only: bool = False,
    ) -> None:
        self.head = head
        self.steered_only = steered_only
        self.flagged = Pool()  # the pieces with an instruction found in them
        self._unpooled: list[Piece] = []  # read, not yet indexed (steered_only: until needed)
        #: Trace the figures, addresses and names of assistant texts too (the view does not).
        self.claims = claims
        self.today = today
        self.pieces = Pool()
        self.calls: dict[str, str] = {}  # call id -> tool name
        self.tools: set[str] = set(tools)
        self.values: list[Value] = []
        self.flags: list[Flagged] = []
        self._heads: dict[tuple[int, int], tuple[Any, Any, list[Piece]]] = {}

    def _head_pieces(self, i: int) -> list[Piece]:
        if self.head is None:
            return []
        messages, schemas = self.head(i)
        key = id(messages), id(schemas)
        cached = self._heads.get(key)
        if cached is not None:
            return cached[2]
        pieces: list[Piece] = []
        for m in messages:
            text = text_of(m.get("content"))
            if m.get("name") == MEMORY_NAME:
                pieces += data_pieces("memory", None, None, None, text, self.tools)
            elif text:
                pieces.append(Piece("instructions", None, None, None, "", text))
                if self.today is None and (found := _TODAY.search(text)):
                    self.today = date.fromisoformat(found.group(1))
        for schema in schemas:
            function = schema.get("function", schema) if isinstance(schema, Mapping) else {}
            name = str(function.get("name") or "")
            if name:
                self.tools.add(name)
            for path, leaf in leaves(function.get("parameters") or {}, f"tools.{name}"):
                if isinstance(leaf, str) and leaf and not path.endswith(".type"):
                    pieces.append(Piece("instructions", None, None, None, path, leaf))
                elif isinstance(leaf, int | float) and not isinstance(leaf, bool):
                    pieces.append(
                        Piece(
                            "instructions",
                            None,
                            None,
                            None,
                            path,
                            json.dumps(leaf),
                            number=abs(float(leaf)),
                        )
                    )
            if function.get("description"):
                pieces.append(
                    Piece(
                        "instructions",
                        None,
                        None,
                        None,
                        f"tools.{name}",
                        str(function["description"]),
                    )
                )
        self._heads[key] = (messages, schemas, pieces)  # held: their ids stay theirs
        return pieces

    def add(
        self, i: int, wire: Mapping[str, Any], run_id: str | None = None
    ) -> tuple[list[Value], list[Flagged]]:
        """Read message ``i``: the values it writes (an assistant's) and the instructions found
        in it (a tool result's, a memory's); what it says becomes a source for later ones."""
        role, name = wire.get("role"), wire.get("name")
        text = text_of(wire.get("content"))
        values: list[Value] = []
        flags: list[Flagged] = []
        if role == "assistant":
            head = self._head_pieces(i)
            risky = [p for p in head if p.flags] if self.steered_only else []
            for call in wire.get("tool_calls") or ():
                fn = call.get("function") or {}
                call_id, tool = str(call.get("id")), str(fn.get("name") or "?")
                self.calls[call_id] = tool
                self.tools.add(tool)
                args: Any = fn.get("arguments")
                if isinstance(args, str):
                    with contextlib.suppress(ValueError):  # else kept as its text, whole
                        args = json.loads(args) if args.strip() else {}
                for path, leaf in leaves(args):
                    sources = self._sources(leaf, head, risky) if traced(leaf) else None
                    if sources is not None:
                        values.append(Value(i, call_id, tool, path, leaf, sources, run_id))
                    inside = _inside(leaf)  # an address in a composed text
                    if (
                        inside
                        and sources is None
                        and traced(leaf)
                        and any(self._sources(e, head, risky) is not None for e in inside)
                    ):  # steered_only: was the leaf found whole?
                        sources = order(match(leaf, self._pool(), self.today, head))
                    whole = sources is not None and any(s.confidence == 1.0 for s in sources)
                    for entity in [] if whole else inside:
                        got = self._sources(entity, head, risky)
                        if got is not None:
                            values.append(Value(i, call_id, tool, path, entity, got, run_id))
            if text and self.claims:
                for claim in _claims(text):
                    got = self._sources(claim, head, risky)
                    if got is not None:
                        values.append(Value(i, None, None, "answer", claim, got, run_id))
        elif role == "tool":
            call_id = str(wire.get("tool_call_id"))
            called = self.calls.get(call_id) or (str(name) if name else None)
            new = data_pieces("tool_result", i, call_id, called, text, self.tools)
            self._read(new)
            flags = [f for p in new for f in p.flags]
        elif name == MEMORY_NAME:
            new = data_pieces("memory", i, None, None, text, self.tools)
            self._read(new)
            flags = [f for p in new for f in p.flags]
        elif role == "user" and name != RUNTIME_NAME:
            self._read([Piece("user", i, None, None, "", text)])
        elif role in ("system", "developer") or (role == "user" and name == RUNTIME_NAME):
            self._read([Piece("instructions", i, None, None, "", text)])
            if self.today is None and (found := _TODAY.search(text)):
                self.today = date.fromisoformat(found.group(1))
        self.values += values
        self.flags += flags
        return values, flags

    def _sources(
        self, value: Any, head: list[Piece], risky: list[Piece]
    ) -> tuple[Source, ...] | None:
        """``value``'s sources; None when :attr:`steered_only` and it lies in no flagged span."""
        if self.steered_only and not match(value, self.flagged, self.today, risky):
            return None
        return order(match(value, self._pool(), self.today, head))

    def _read(self, pieces: list[Piece]) -> None:
        """Keep what a message says as sources for later values (indexed at once, or when
        :attr:`steered_only` first needs them all)."""
        self.flagged.add(p for p in pieces if p.flags)
        self._unpooled += pieces
        if not self.steered_only:
            self._pool()

    def _pool(self) -> Pool:
        """Every piece read so far, indexed."""
        if self._unpooled:
            self.pieces.add(self._unpooled)
            self._unpooled = []
        return self.pieces


#: Names an answer gives: two or more capitalised words (Riverside View Hotel), or a quotation.
NAME = re.compile(
    r"\b[A-Z][\w'’&-]+(?:\s+(?:of|the|de|la|du|and|&)?\s*[A-Z][\w'’&-]+)+"
    r"|[\"“「『']([^\"”」』'\n]{3,60})[\"”」』']"
)


def _claims(text: str) -> list[str]:
    """What a text claims: its figures (:mod:`.figures`), entities (e-mail addresses, URLs)
    and names (capitalised words in a row, quotations)."""
    found = {m.start(): m.group(0) for m in figures(text)}
    taken: list[tuple[int, int]] = []
    for m in ENTITY.finditer(text):
        found = {k: v for k, v in found.items() if not m.start() <= k < m.end()}
        found[m.start()] = m.group(0).rstrip(".,;")
        taken.append((m.start(), m.end()))
    for m in NAME.finditer(text):
        if not any(a <= m.start() < b for a, b in taken):
            name = m.group(1) if m.group(1) is not None else m.group(0)
            found.setdefault(m.start(), name)
    return [found[k] for k in sorted(found)]


def _inside(value: object) -> list[str]:
    """The addresses (e-mail, URL) inside a longer text value, each traced on its own."""
    if not isinstance(value, str) or len(value) < 12:
        return []
    return [
        m.group(0).rstrip(".,;")
        for m in ENTITY.finditer(value)
        if m.group(0).rstrip(".,;") != value.strip()
    ]


def trace(
    wires: Sequence[Mapping[str, Any]],
    *,
    head: Head | None = None,
    today: date | None = None,
    runs: Sequence[Any] = (),
    claims: bool = True,
    steered_only: bool = False,
) -> Tracer:
    """A :class:`Tracer` that has read ``wires`` (each value tagged with the run it is in;
    ``claims=False``: calls and results only, an answer's figures untraced; ``steered_only``:
    only the values that can be steered, see :class:`Tracer`)."""
    tracer = Tracer(head, today, claims=claims, steered_only=steered_only)
    bounds = [
        (r.start, r.end if r.end >= 0 else len(wires), r.run_id)
        for r in runs
        if getattr(r, "start", None) is not None
    ]
    for i, wire in enumerate(wires):
        run_id = next((rid for a, b, rid in bounds if a <= i < b), None)
        tracer.add(i, wire, run_id)
    return tracer
