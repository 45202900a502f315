"""Matching a value to the pieces of what the model was given (see :mod:`.trace`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from .dates import day_of
from .normal import Folded, number_of
from .pieces import Piece, Pool
from .sources import KINDS, Source

__all__ = ["match", "order", "traced"]

_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff]+")


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
