"""Matching a value to the pieces of what the model was given (see :mod:`.trace`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .dates import Day, dates_in, day_of
from .detector import scan
from .normal import Folded, number_of, numbers_in
from .rules import triggered
from .sources import KINDS, Flagged, Source, leaves, parsed

__all__ = ["Piece", "Pool", "data_pieces", "match", "order", "traced"]

_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff]+")


@dataclass
class Piece:
    """A readable part of a source message: one string or number of a JSON result (``path``),
    or a whole text; folded, its numbers and dates read on first use."""

    kind: str
    message: int | None
    call_id: str | None
    tool: str | None
    path: str
    text: str
    number: float | None = None
    flags: list[Flagged] = field(default_factory=list)
    _folded: Folded | None = None
    _numbers: list[tuple[float, int, int]] | None = None
    _dates: list[tuple[Day, int, int]] | None = None

    @property
    def folded(self) -> Folded:
        if self._folded is None:
            self._folded = Folded.of(self.text)
        return self._folded

    def numbers(self) -> list[tuple[float, int, int]]:
        if self._numbers is None:
            self._numbers = [(abs(n), a, b) for n, a, b in numbers_in(self.text)]
        return self._numbers

    def dates(self, today: date | None) -> list[tuple[Day, int, int]]:
        if self._dates is None:
            self._dates = dates_in(self.text, today)
        return self._dates

    def flag_at(self, start: int, end: int) -> Flagged | None:
        """The flag a match lies in, whole (a value that reaches outside the instruction, such
        as a channel name with an injection inside it, did not come only from it)."""
        for f in self.flags:
            if f.flag.start <= start and end <= f.flag.end:
                return f
        return None

    def source(self, start: int, end: int, confidence: float) -> Source:
        return Source(
            self.kind,
            self.message,
            self.call_id,
            self.path,
            start,
            end,
            self.text[start:end],
            confidence,
            self.flag_at(start, end),
        )


def data_pieces(
    kind: str,
    message: int | None,
    call_id: str | None,
    tool: str | None,
    text: str,
    tools: Iterable[str] = (),
    *,
    flag: bool = True,
) -> list[Piece]:
    """The pieces of a source text: each string and number of it when it is JSON, else the
    text whole; scanned for instructions when ``flag`` (tool results and memory)."""
    value = parsed(text)
    pieces: list[Piece] = []
    if value is None:
        pieces.append(Piece(kind, message, call_id, tool, "", text))
    else:
        for path, leaf in leaves(value):
            if isinstance(leaf, str) and leaf:
                pieces.append(Piece(kind, message, call_id, tool, path, leaf))
            elif isinstance(leaf, int | float) and not isinstance(leaf, bool):
                pieces.append(
                    Piece(
                        kind,
                        message,
                        call_id,
                        tool,
                        path,
                        json.dumps(leaf),
                        number=abs(float(leaf)),
                    )
                )
    names = list(tools)
    if flag and triggered(text, names):
        for p in pieces:
            if p.number is None:
                p.flags = [
                    Flagged(message or 0, call_id, tool, p.path, f) for f in scan(p.text, names)
                ]
    return pieces


# -- matching ------------------------------------------------------------------------------
class Pool(list[Piece]):
    """The pieces a tracer has read, with their numbers indexed by value: a number is found
    in one lookup, not by reading every piece again (a long chat's figures stay linear). A text
    asked again (the city, the date of every call) reads only the pieces added since it was
    last asked: a chat's repeated values stay linear too."""

    #: How many texts keep their hits (the oldest asked is forgotten first).
    REMEMBERED = 4096

    def __init__(self) -> None:
        super().__init__()
        self.numbers: dict[float, list[tuple[Piece, int, int]]] = {}
        self._hits: dict[tuple[str, str], tuple[int, list[Source]]] = {}

    def scan(self, key: tuple[str, str], hit: Callable[[Piece], Source | None]) -> list[Source]:
        """Every piece's ``hit``, in the order read; ``key`` names the question asked, the same
        key the same question (the pieces are only ever added to)."""
        read, found = self._hits.pop(key, (0, []))
        for k in range(read, len(self)):
            if (s := hit(self[k])) is not None:
                found.append(s)
        self._hits[key] = (len(self), found)
        if len(self._hits) > self.REMEMBERED:
            del self._hits[next(iter(self._hits))]
        return list(found)

    def add(self, pieces: Iterable[Piece]) -> None:
        for p in pieces:
            self.append(p)
            found = [(p.number, 0, len(p.text))] if p.number is not None else p.numbers()
            seen: set[float] = set()
            for n, a, b in found:
                key = round(n, 6)
                if key not in seen:  # the first place a piece writes a number
                    seen.add(key)
                    self.numbers.setdefault(key, []).append((p, a, b))


def _match_number(value: float, pieces: Sequence[Piece]) -> list[Source]:
    target = round(abs(value), 6)
    sure = 1.0 if target >= 10 or target != int(target) else 0.5
    out = []
    if isinstance(pieces, Pool):
        return [p.source(a, b, sure) for p, a, b in pieces.numbers.get(target, ())]
    for p in pieces:
        if p.number is not None:
            if round(p.number, 6) == target:
                out.append(p.source(0, len(p.text), sure))
            continue
        for n, a, b in p.numbers():
            if round(n, 6) == target:
                out.append(p.source(a, b, sure))
                break
    return out


_IDENTIFIER = re.compile(r"[_@/]")


def _hits(
    key: tuple[str, str],
    hit: Callable[[Piece], Source | None],
    pieces: Sequence[Piece],
    extra: Sequence[Piece],
) -> list[Source]:
    """``hit`` over ``extra`` and then ``pieces`` (a :class:`Pool` reading only what is new)."""
    first = [s for p in extra if (s := hit(p)) is not None]
    if isinstance(pieces, Pool):
        return first + pieces.scan(key, hit)
    return first + [s for p in pieces if (s := hit(p)) is not None]


def _match_exact(text: str, pieces: Sequence[Piece], extra: Sequence[Piece] = ()) -> list[Source]:
    """An identifier (``new_password``, an address, a path) keeps its connectors: matched as
    written, case aside, before any folding would make it words."""
    needle = text.strip().lower()

    def hit(p: Piece) -> Source | None:
        if p.number is None and (at := p.text.lower().find(needle)) >= 0:
            return p.source(at, at + len(needle), 1.0)
        return None

    return _hits(("exact", needle), hit, pieces, extra)


def _match_text(
    text: str, pieces: Sequence[Piece], today: date | None, extra: Sequence[Piece] = ()
) -> list[Source]:
    folded = Folded.of(text).text
    if not folded:
        return []
    identifier = _IDENTIFIER.search(text) and len(text) <= 80
    if identifier and (exact := _match_exact(text, pieces, extra)):
        return exact

    def hit(p: Piece) -> Source | None:
        if p.number is None and (found := p.folded.find(folded)):
            a, b = p.folded.span(*found[0])
            return p.source(a, b, 1.0)
        return None

    out = _hits(("text", folded), hit, pieces, extra)
    if out:
        return out
    if extra:
        pieces = [*extra, *pieces]
    number = number_of(text)
    if number is not None:
        return _match_number(number, pieces)
    day = day_of(text, today)
    if day is not None:
        for p in pieces:
            best = max(((day.agrees(d), a, b) for d, a, b in p.dates(today)), default=None)
            if best is not None and best[0] > 0:
                out.append(p.source(best[1], best[2], best[0]))
        return out
    return _match_parts(folded, pieces)


def _tokens(folded: str) -> list[str]:
    """Words of a folded text, a Chinese run cut from the letters and digits beside it."""
    out = []
    for word in folded.split():
        out += [t for t in re.split(r"([\u2e80-\u9fff\uf900-\ufaff]+)", word) if t]
    return out


def _match_parts(folded: str, pieces: Sequence[Piece]) -> list[Source]:
    """A composed text: the share of its words (a Chinese run whole, else its character pairs)
    found in the pieces; below half, none."""
    parts: list[str] = []
    for token in _tokens(folded):
        if (
            _CJK.fullmatch(token)
            and len(token) > 2
            and not any(token in p.folded.text for p in pieces)
        ):
            parts += [token[i : i + 2] for i in range(len(token) - 1)]
        elif len(token) >= 2 or _CJK.fullmatch(token):
            parts.append(token)
    if not parts:
        return []
    found: dict[int, tuple[Piece, int, int]] = {}
    hits = 0
    for token in parts:
        for k, p in enumerate(pieces):
            if p.number is not None:
                continue
            spans = (
                p.folded.find(token)
                if not _CJK.fullmatch(token)
                else ([(i, i + len(token))] if (i := p.folded.text.find(token)) >= 0 else [])
            )
            if spans:
                hits += 1
                if k not in found:
                    a, b = p.folded.span(*spans[0])
                    found[k] = (p, a, b)
                break
    share = hits / len(parts)
    if share < 0.5:
        return []
    return [p.source(a, b, round(0.8 * share, 3)) for p, a, b in found.values()]


def match(
    value: Any, pieces: Sequence[Piece], today: date | None = None, extra: Sequence[Piece] = ()
) -> list[Source]:
    """The sources of one scalar ``value`` among ``extra`` (read one by one) and ``pieces``
    (a :class:`Pool`'s numbers looked up, its texts read once). A text that is a number whole
    ("3,000", "三千") is matched as that number."""
    if isinstance(value, str) and (number := number_of(value)) is not None:
        value = number
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        first = _match_number(float(value), extra) if extra else []
        return first + _match_number(float(value), pieces)
    return _match_text(str(value), pieces, today, extra)


def order(sources: list[Source]) -> tuple[Source, ...]:
    rank = {k: i for i, k in enumerate(KINDS)}
    return tuple(sorted(sources, key=lambda s: (rank[s.kind], s.message or 0)))


def traced(value: Any) -> bool:
    """Is this leaf a value to trace (not a flag, a null or an empty text)?"""
    if isinstance(value, bool) or value is None:
        return False
    return not (isinstance(value, str) and not value.strip())
