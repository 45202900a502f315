"""The user's seeded slips, each a documented knob of :class:`~agentnb.evals.User`.

* ``vague_first`` - the chance that the opening leaves out its clauses that hold facts
  (「我周五从上海去北京出差，帮我订个酒店，预算3000」→「帮我订个酒店」): the details come only
  when asked, or when the user restates its need.
* ``only_when_asked`` - the chance, per fact, that the user never volunteers it: it gives that
  fact only to a question that asks for it.
* ``typo`` - the chance, per turn, of one typo: two neighbouring letters of a word swapped
  (Beijing → Biejing, 上海 → 海上).
* ``changes={k: {"budget": "2000"}}`` (not random) - a change of mind at turn ``k``.

Every draw is a number in [0, 1) from a digest of ``(seed, what, turn)``: never global random
state, never Python's salted ``hash()``, so the same seed gives the same conversation in every
process, and a slip fires or not independently of the others.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["SLIPS", "draw", "typo", "vague"]

#: slip -> what it does (the rule table shows it).
SLIPS = {
    "vague_first": "the opening leaves out its clauses that hold facts (they come when asked)",
    "only_when_asked": "a fact is never volunteered: given only to a question that asks for it",
    "typo": "one typo in the turn: two neighbouring letters of a word swapped",
}

_CLAUSE = re.compile(r"(?:[^，,。；;！!？?.]|\.(?!\s|$))+(?:[，,。；;！!？?]|\.(?=\s|$))?\s*")
_WORDS = re.compile(r"[\u4e00-\u9fff]{2,}|[A-Za-z]{4,}")


def draw(seed: int, *what: object) -> float:
    """A number in [0, 1) for ``(seed, *what)``: the same in every process."""
    text = "\x00".join(map(str, (seed, *what)))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def vague(opening: str, values: list[str]) -> tuple[str, list[str]]:
    """The opening without its clauses that name one of ``values``, and the clauses left out
    (none when every clause holds one: a vague opening must still say something)."""
    clauses = [c for c in _CLAUSE.findall(opening) if c.strip()]
    kept = [c for c in clauses if not any(v and v in c for v in values)]
    dropped = [c.strip(" ，,。；;.") for c in clauses if c not in kept]
    if not kept or not dropped:
        return opening, []
    text = "".join(kept).strip()
    if text[-1] in "，,；;":
        text = text[:-1] + ("。" if re.search(r"[\u4e00-\u9fff]", text) else ".")
    return text, dropped


def typo(text: str, seed: int, turn: int) -> tuple[str, str]:
    """``text`` with two neighbouring letters of one word swapped, and the change in words
    (``"'Beijing' → 'Biejing'"``); ``(text, "")`` when no word is long enough."""
    words = list(_WORDS.finditer(text))
    if not words:
        return text, ""
    word = words[int(draw(seed, "typo-word", turn) * len(words))]
    w = word.group(0)
    at = 1 + int(draw(seed, "typo-at", turn) * (len(w) - 2)) if len(w) > 2 else 0
    swapped = w[:at] + w[at + 1] + w[at] + w[at + 2 :]
    return text[: word.start()] + swapped + text[word.end() :], f"'{w}' → '{swapped}'"
