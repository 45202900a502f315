"""A sentence read once: its clauses, its negations and the words it matches, indexed.

The lexicon asks the same questions of every cue it finds in a sentence: which clause does
it stand in, is it negated there, which answer sections (or roles) does that clause, or the
sentence, name, which section is named first from the cue on. Asked of the text each time,
the questions cost the sentence's length per cue, so a long sentence of many cues cost its
length squared. :class:`Sentence` scans the sentence once per pattern and answers each
question by a binary search, or from a cache keyed by the clause: reading stays linear.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping

__all__ = ["CLAUSE", "Sentence"]

#: What separates the clauses of a sentence.
CLAUSE = re.compile(r"[，,、:：;；]")


class Sentence:
    """``text`` (a normalised sentence) with its clause separators and the matches of the
    given ``negation`` and word ``patterns`` (name -> regular expression), found once."""

    def __init__(self, text: str, negation: re.Pattern[str], patterns: Mapping[str, str]):
        self.text = text
        self._ends = [m.end() for m in CLAUSE.finditer(text)]  # where each clause starts
        self._starts = [m.start() for m in CLAUSE.finditer(text)]
        self._negations = [(m.start(), m.end()) for m in negation.finditer(text)]
        self._words = {
            name: [m.start() for m in re.finditer(p, text, re.I)] for name, p in patterns.items()
        }
        self._cache: dict[tuple[int, int, int], tuple[str, ...]] = {}

    def clause(self, start: int, end: int) -> tuple[int, int]:
        """The clause (between separators) the span ``start:end`` stands in, with the span."""
        before = bisect.bisect_right(self._ends, start)
        after = bisect.bisect_left(self._starts, end)
        return (
            self._ends[before - 1] if before else 0,
            self._starts[after] if after < len(self._starts) else len(self.text),
        )

    def negated(self, start: int) -> bool:
        """A negation before ``start`` in the same clause."""
        clause = self.clause(start, start)[0]
        at = bisect.bisect_left(self._negations, (clause, -1))
        return at < len(self._negations) and self._negations[at][1] <= start

    def named(self, start: int, end: int, patterns: Mapping[str, str]) -> tuple[str, ...]:
        """The names of ``patterns`` found in ``text[start:end]`` (cached per span: a clause
        or the whole sentence)."""
        key = (id(patterns), start, end)
        if key not in self._cache:
            piece = self.text[start:end]
            self._cache[key] = tuple(n for n, p in patterns.items() if re.search(p, piece, re.I))
        return self._cache[key]

    def first(self, start: int, end: int | None = None) -> str | None:
        """The word pattern matched first in ``text[start:end]`` (the earliest of them)."""
        stop = len(self.text) if end is None else end
        hits = []
        for name, positions in self._words.items():
            at = bisect.bisect_left(positions, start)
            if at < len(positions) and positions[at] < stop:
                hits.append((positions[at], name))
        return min(hits)[1] if hits else None
