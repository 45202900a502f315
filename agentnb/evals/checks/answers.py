"""Checks over the final answer: what it says, and whether its numbers came from the tools."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ...errors import ConfigurationError
from ...messages import content_text
from ..normalise import contains_words, words
from .base import Check, Evidence, strings
from .conversation import scoped
from .grounding import ungrounded_answer

__all__ = [
    "AnswerContains",
    "AnswerMatches",
    "Grounded",
    "answer_contains",
    "answer_matches",
    "grounded",
]


@dataclass(frozen=True, repr=False)
class AnswerContains(Check):
    """The answer contains the texts (see :func:`answer_contains`)."""

    kind: ClassVar[str] = "answer_contains"
    texts: tuple[str, ...]
    mode: str = "all"

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Check:
        return cls(tuple(fields["texts"]), fields.get("mode", "all"))

    @property
    def name(self) -> str:
        mode = ", mode='any'" if self.mode == "any" else ""
        return f"answer_contains({', '.join(map(repr, self.texts))}{mode})"

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        missing = [t for t in self.texts if not contains_words(evidence.output, t)]
        ok = not missing if self.mode == "all" else len(missing) < len(self.texts)
        if ok:
            return True, ""
        head = evidence.output[:120].replace("\n", " ")
        return False, f"the answer lacks {', '.join(map(repr, missing))}: {head!r}"


def answer_contains(
    *texts: str | list[str], mode: Literal["all", "any"] = "all", over: str = "turn"
) -> Check:
    """The final answer contains every one of ``texts`` (``mode="any"``: at least one; a list
    of them too), compared without case, extra whitespace or punctuation, as whole words:
    "°C" is not found in "Chengdu", "300" not in "3000" (each Chinese character is a word,
    so "北京" is found in "我去北京出差"). For parts of words, :func:`answer_matches`."""
    given = strings("answer_contains", texts)
    empty = [t for t in given if not words(t)]
    if empty:  # a check no answer could pass
        raise ConfigurationError(f"answer_contains: {empty[0]!r} has no words to look for")
    return scoped(AnswerContains(given, mode), over)


@dataclass(frozen=True, repr=False)
class AnswerMatches(Check):
    """The answer matches a regular expression (see :func:`answer_matches`)."""

    kind: ClassVar[str] = "answer_matches"
    pattern: str

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        if re.search(self.pattern, evidence.output):
            return True, ""
        return False, f"no match for /{self.pattern}/ in {evidence.output[:120]!r}"


def answer_matches(pattern: str, *, over: str = "turn") -> Check:
    """The final answer matches ``pattern`` (``re.search``)."""
    re.compile(pattern)  # a bad pattern fails here, not in every run
    return scoped(AnswerMatches(pattern), over)


@dataclass(frozen=True, repr=False)
class Grounded(Check):
    """Every figure of the answer appears in a tool result, or in what the user or the
    instructions said (:mod:`.grounding`, the one grounding check; its text rule and normaliser
    are :mod:`agentnb.provenance`'s, which ``session.provenance()`` reads too)."""

    kind: ClassVar[str] = "grounded"
    min_digits: int = 2

    def judge(self, evidence: Evidence) -> tuple[bool, str]:
        texts = [content_text(m.get("content")) for m in evidence.result.session.transcript.wires
                 if m.get("role") != "assistant"]  # fmt: skip
        loose = ungrounded_answer(evidence.output, texts, self.min_digits)
        if not loose:
            return True, ""
        return False, f"{', '.join(loose)} appear in no tool result or user message"


def grounded(min_digits: int = 2, *, over: str = "turn") -> Check:
    """Every figure in the final answer appears in some tool result (or what the user or the
    instructions said): dates, times, codes such as flight numbers, and amounts.

    Numbers with fewer than ``min_digits`` digits before the point (counts such as "6 个航班",
    "1 晚") are not checked; "66%" is grounded by a tool's 0.66; a figure given as an example
    (例如 1月10日) claims nothing. A fabricated answer ("CA1234 ... 650 元") fails.
    ``over="conversation"``: the last answer against every turn's tool results and words.
    """
    return scoped(Grounded(min_digits), over)
