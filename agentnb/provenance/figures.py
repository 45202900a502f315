"""The text rule: which parts of a text are figures a reader would check.

Its home is here, under provenance (``an.checks.grounded()``, ``an.testing.ungrounded_figures``
and ``session.provenance()`` read it; grounding is provenance asked of an answer's figures).
The *figures* of a text are dates in any written form, times, codes that mix letters and digits
(``MU5101``), amounts (``3,000``, ``12.5``, ``80%``); :data:`ENTITY` adds e-mail addresses and
URLs. Numbers with fewer than ``min_digits`` digits before the point are counts ("6 个航班",
"1 晚"). A figure given as an example (例如 1月10日, e.g. January 10, for example: ...) claims
nothing.

:func:`ungrounded` is grounding: codes and times are compared as text, numbers by value
through the one normaliser (``880`` is ``880.0``; ``80%`` is ``0.8``; ``三千`` is 3000; a
result's ``-200`` grounds an overrun of ``200``), dates by the day they name (``1月10日``,
``January 10`` and ``2025-01-10`` are one day).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from typing import Any

from .normal import Day, dates_in, numbers_in

__all__ = ["ENTITY", "EXAMPLE", "FIGURE", "examples", "figure_day", "figures", "ungrounded"]

_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()  # noqa: SIM905
_MONTH_NAMES = (
    "january|february|march|april|may|june|july|august|september|october|november|"
    "december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
)
_EN_MONTH = rf"(?:{_MONTH_NAMES})\.?"
_EN_MONTH_AFTER = _EN_MONTH.replace("may|", "")  # "10 may be": not a date
#: A figure: a date in any of its written forms, a time, a code, or a number (maybe a percent).
FIGURE = re.compile(
    r"(?<![A-Za-z0-9.])(?:"
    r"(?P<iso>(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2}))"
    rf"|(?P<zh>(?:\d{{4}}年)?(?P<zm>\d{{1,2}})月(?P<zd>\d{{1,2}})[日号])"
    rf"|(?P<en>(?P<em>{_EN_MONTH})\s+(?P<ed>\d{{1,2}})(?:st|nd|rd|th)?|(?P<ed2>\d{{1,2}})"
    rf"(?:st|nd|rd|th)?\s+(?P<em2>{_EN_MONTH_AFTER}))"
    r"|(?P<time>\d{1,2}:\d{2})"
    r"|(?P<code>[A-Za-z0-9]*(?:[A-Za-z][0-9]|[0-9][A-Z])[A-Za-z0-9]*)"
    r"|(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<pct>%)?"
    r")(?![A-Za-z0-9])",
    re.IGNORECASE,
)
#: Entities an answer or an argument names that are not figures: e-mail addresses and URLs.
ENTITY = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bhttps?://[^\s\"'<>，。）)]+|\bwww\.[\w-]+(?:\.[\w-]+)+[^\s\"'<>，。）)]*",
    re.IGNORECASE,
)
#: Where an example starts: what follows it, to the end of its bracket or sentence, is no claim.
EXAMPLE = re.compile(r"例如|比如|譬如|\be\.g\.|\bfor example\b|\bfor instance\b|\bsuch as\b", re.I)
_OPEN, _CLOSE = "（(「『“【[", "）)」』”】]"


def examples(text: str) -> list[range]:
    """The spans of ``text`` given as examples: from 例如 / e.g. / for example to the end of
    the bracket it stands in, or of its sentence (quotes inside it included)."""
    spans = []
    for m in EXAMPLE.finditer(text):
        depth, end = 0, len(text)
        for i in range(m.end(), len(text)):
            ch = text[i]
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                if depth == 0:
                    end = i
                    break
                depth -= 1
            elif depth == 0 and ch in "。！？!?\n；;":
                end = i
                break
        spans.append(range(m.start(), end))
    return spans


def figure_day(m: re.Match[str]) -> Day | None:
    """The day a date figure names (no year unless written), or None for other figures."""
    if m.group("iso"):
        return Day(int(m.group("y")), int(m.group("m")), int(m.group("d")))
    if m.group("zh"):
        return Day(None, int(m.group("zm")), int(m.group("zd")))
    if m.group("en"):
        month = (m.group("em") or m.group("em2"))[:3].lower()
        return Day(None, _MONTHS.index(month) + 1, int(m.group("ed") or m.group("ed2")))
    return None


def figures(text: str, min_digits: int = 2) -> list[re.Match[str]]:
    """The figures ``text`` claims: not in an example, not a count (fewer than ``min_digits``
    digits before the point, unless a percent)."""
    skip = examples(text)
    out = []
    for m in FIGURE.finditer(text):
        if any(m.start() in span for span in skip):
            continue
        number = m.group("number")
        whole = number.replace(",", "").split(".")[0] if number else ""
        if number is not None and not m.group("pct") and len(whole) < min_digits:
            continue
        out.append(m)
    return out


def _numbers(value: Any, out: set[float]) -> None:
    """Every number a JSON value holds: numbers as they are, texts through the normaliser."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        out.add(round(abs(float(value)), 6))
    elif isinstance(value, str):
        out.update(round(abs(n), 6) for n, _, _ in numbers_in(value))
    elif isinstance(value, dict):
        for v in value.values():
            _numbers(v, out)
    elif isinstance(value, list):
        for v in value:
            _numbers(v, out)


def ungrounded(answer: str, sources: Iterable[str], min_digits: int = 2) -> list[str]:
    """The figures of ``answer`` that none of ``sources`` (texts, JSON or not) holds, each once,
    in order, as the answer writes them."""
    texts = list(sources)
    evidence = "\n".join(texts)
    numbers: set[float] = set()
    for text in texts:
        value: Any = text
        with contextlib.suppress(ValueError):
            value = json.loads(text)
        _numbers(value, numbers)
    days = [d for d, _, _ in dates_in(evidence)]
    out: dict[str, None] = {}
    for m in figures(answer, min_digits):
        figure, day = m.group(0), figure_day(m)
        if day is not None:
            if figure in evidence or any(day.agrees(d) >= 0.9 for d in days):
                continue
        elif m.group("number") is not None:
            value = float(m.group("number").replace(",", ""))
            if round(value, 6) in numbers or (m.group("pct") and round(value / 100, 6) in numbers):
                continue
        elif figure in evidence:
            continue
        out[figure] = None
    return list(out)
