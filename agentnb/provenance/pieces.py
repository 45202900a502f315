"""What the model was given, read into pieces a value is matched against (see :mod:`.match`):
each string and number of a JSON result at its path, or a text whole; a tracer's
:class:`Pool` of them, its numbers indexed and the texts it was asked for remembered."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

from .dates import Day, dates_in
from .detector import scan
from .normal import Folded, numbers_in
from .rules import triggered
from .sources import Flagged, Source, leaves, parsed

__all__ = ["Piece", "Pool", "data_pieces"]


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
