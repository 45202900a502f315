"""How the rule-based user reads the agent's answer: plain rules over its sentences.

:func:`read` splits the answer into sentences (examples inside a question removed: 例如 周五
claims nothing) and finds:

* the **questions**: sentences that ask (？/?, 请告诉我, tell me), and in each the slots it asks
  for (:data:`~.cues.SLOT_CUES`, longest cue first; a fact named otherwise is asked for by its
  own name); a question that names no slot the user knows is kept as *unread*;
* a **proposal**: a question that asks for a yes (需要我为你预订吗？ shall I book it?);
* **contradictions** between the rest of the answer and the user's facts: a date (the answer's
  calendar days, else its weekdays, none of them the user's), a place (``city``: an answer
  with figures that never names it), a budget (the answer's budget figure is not the
  user's);
* whether it holds what the user ``wants`` (each entry a text, or a list of alternatives).

Nothing is guessed: what it cannot read it leaves out, and the turn says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .cues import ASKING, EXAMPLE, SENTENCES, SLOT_CUES, WEEKDAYS, YES_NO

__all__ = ["Reading", "forms", "mentions", "read", "satisfied"]

_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ZH_DAY = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_EN_DAY = re.compile(r"\b(" + "|".join(_MONTHS) + r")[a-z]*\.?\s+(\d{1,2})\b", re.I)
_WEEKDAY = re.compile(
    "|".join(
        rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w)
        for w in sorted(WEEKDAYS, key=len, reverse=True)
    ),
    re.I,
)
_BUDGET = re.compile(
    r"预算\D{0,8}?(\d[\d,]*)|(\d[\d,]*)\s*(?:元|CNY)?\s*(?:的)?预算|"
    r"budget\D{0,12}?(\d[\d,]*)|(\d[\d,]*)\s*(?:CNY|yuan)?\s*budget",
    re.I,
)
#: The facts whose absence from an answer with figures is a contradiction: the city asked
#: about (a weather or hotel answer names it; a flight answer may name airports instead).
PLACES = ("city",)


@dataclass
class Reading:
    """What the user read in one answer (see the module docstring)."""

    text: str
    questions: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # questions naming no slot it knows
    proposal: str = ""  # the sentence that asks for a yes
    contradictions: list[tuple[str, str]] = field(default_factory=list)  # (slot, what it says)
    figures: bool = False  # the answer gives figures (a substantive answer)


def forms(value: str | Sequence[str]) -> list[str]:
    """A fact's forms: how the user says it first, then the forms it also recognises."""
    return [value] if isinstance(value, str) else [str(v) for v in value]


_NUMERALS = str.maketrans("一二两三四五六七八九", "1223456789")


def _folded(text: str) -> str:
    """Case aside, and a Chinese numeral as its digit (三晚 is 3 晚), spaces dropped."""
    return text.casefold().translate(_NUMERALS).replace(" ", "")


def mentions(text: str, value: str | Sequence[str]) -> bool:
    """Does ``text`` name the fact in any of its forms (case, spaces and 三/3 aside)?"""
    low = _folded(text)
    return any(_folded(f) in low for f in forms(value) if f)


_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|Mr|Ms|Dr|No)\.", re.I)
_EN_END = re.compile(r"(?<=\.)\s+(?=[A-Z\"'(])")


def _sentences(text: str) -> list[str]:
    """The sentences: split at 。！？!? and line ends, and at a full stop before a capital
    (an abbreviation's stop is no end: e.g. Friday)."""
    out = []
    for part in SENTENCES.findall(text):
        kept = _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x00"), part)
        out += [s.replace("\x00", ".").strip() for s in _EN_END.split(kept)]
    return [s for s in out if s]


def _slots(sentence: str, facts: Mapping[str, object]) -> list[str]:
    """The slots a question asks for, the longest cue first (a cue takes its words)."""
    low = EXAMPLE.sub(" ", sentence).casefold()
    cues = [(c.casefold(), s) for s, cs in SLOT_CUES.items() for c in cs]
    cues += [(k.casefold(), k) for k in facts if k not in SLOT_CUES and k.strip()]
    found: list[tuple[int, str]] = []
    for cue, slot in sorted(cues, key=lambda c: -len(c[0])):
        pattern = rf"\b{re.escape(cue)}\b" if cue.isascii() else re.escape(cue)
        for m in re.finditer(pattern, low):
            found.append((m.start(), slot))
            low = low[: m.start()] + " " * len(m.group(0)) + low[m.end() :]
    return list(dict.fromkeys(slot for _, slot in sorted(found)))


def _days(text: str) -> set[tuple[int, int]]:
    """The calendar days (month, day) a text names: 2025-01-10, 1月10日, January 10."""
    days = {(int(m[2]), int(m[3])) for m in _ISO.finditer(text)}
    days |= {(int(m[1]), int(m[2])) for m in _ZH_DAY.finditer(text)}
    days |= {(_MONTHS.index(m[1][:3].lower()) + 1, int(m[2])) for m in _EN_DAY.finditer(text)}
    return days


def _weekdays(text: str) -> set[int]:
    return {WEEKDAYS[m.group(0).lower()] for m in _WEEKDAY.finditer(text)}


def _budgets(text: str) -> set[int]:
    found = set()
    for m in _BUDGET.finditer(text):
        number = next(g for g in m.groups() if g)
        found.add(int(number.replace(",", "")))
    return found


def _contradictions(answer: str, facts: Mapping[str, str | Sequence[str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    date = facts.get("date")
    if date is not None:
        joined = " ".join(forms(date))
        mine, theirs = _days(joined), _days(answer)
        if mine and theirs and not mine & theirs:
            shown = sorted(theirs)[0]
            out.append(("date", f"{shown[0]}-{shown[1]}"))
        elif not (mine and theirs):
            wd_mine, wd_theirs = _weekdays(joined), _weekdays(answer)
            if wd_mine and wd_theirs and not wd_mine & wd_theirs:
                out.append(("date", ",".join(sorted(_WEEKDAY.findall(answer)))[:40]))
    figures = bool(re.search(r"\d", answer))
    for slot in PLACES:
        place = facts.get(slot)
        if place is not None and figures and not mentions(answer, place):
            out.append((slot, ""))
    budget = facts.get("budget")
    if budget is not None:
        mine_b = _budgets("预算 " + " ".join(forms(budget))) | {
            int(n) for f in forms(budget) for n in re.findall(r"\d+", f.replace(",", ""))
        }
        theirs_b = _budgets(answer)
        if mine_b and theirs_b and not mine_b & theirs_b:
            out.append(("budget", str(sorted(theirs_b)[0])))
    return out


def read(text: str, facts: Mapping[str, str | Sequence[str]]) -> Reading:
    """Read one answer of the agent against the user's ``facts`` (see the module docstring)."""
    reading = Reading(text)
    claims = []
    for sentence in _sentences(text):
        if ASKING.search(sentence) or YES_NO.search(sentence):
            reading.questions.append(sentence)
            slots = _slots(sentence, facts)
            if YES_NO.search(sentence) and not reading.proposal:
                reading.proposal = sentence
                slots = [s for s in slots if s != "budget" or "预算" not in sentence[:2]]
            if slots:
                reading.asked.extend(s for s in slots if s not in reading.asked)
            elif not YES_NO.search(sentence):
                reading.unknown.append(sentence)
        else:
            claims.append(EXAMPLE.sub(" ", sentence))
    answer = " ".join(claims)
    reading.figures = bool(re.search(r"\d", answer))
    reading.contradictions = _contradictions(answer, facts) if claims else []
    return reading


def satisfied(text: str, wants: Sequence[str | Sequence[str]]) -> list[str]:
    """The entries of ``wants`` the answer does not hold (each a text or its alternatives),
    shown as their first form; [] when it holds them all."""
    low = text.casefold()
    missing = []
    for want in wants:
        alternatives = [want] if isinstance(want, str) else list(want)
        if not any(a.casefold() in low for a in alternatives):
            missing.append(alternatives[0])
    return missing
