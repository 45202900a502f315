"""The one normaliser: text, numbers and dates as a reader compares them.

Provenance and grounding (``an.checks.grounded()``) read values through this module only:

* **text** - :func:`fold`: NFKC (full-width ``ＭＵ５１０１`` is ``MU5101``), case folded, every run
  of punctuation, symbols and spaces one space; :class:`Folded` keeps, for each folded
  character, where it came from, so a match is reported on the original text.
* **numbers** - :func:`numbers_in`: ``3000``, ``3,000``, ``3k``, ``1.5万``, ``¥3000``, ``3000元``,
  ``80%`` (also ``0.8``), Chinese numerals (``三千``, ``两千五`` = 2500, ``一千五百``) and English
  number words (``three thousand``, ``fifteen hundred``). Units are read past, not compared.
* **dates** - :func:`dates_in` and :func:`day_of` (:mod:`.dates`): ``2025-01-10``,
  ``2025年1月10日``, ``1月10日``, ``January 10``, and, against a reference ``today``, the
  relative forms the travel tools accept (周五, 下周一, tomorrow, next Monday ...).

Limits: a value in another language or script (北京 / Beijing) is another value; arithmetic is not
followed (a total is traced to where it is written, not to its addends); a bare number below 10
matches any such number (counts are weak evidence, see :mod:`.trace`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .dates import Day, dates_in, day_of

__all__ = [
    "Day",
    "Folded",
    "chinese_number",
    "dates_in",
    "day_of",
    "fold",
    "number_of",
    "numbers_in",
]

_SEPARATOR = re.compile(r"[\W_]", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Folded:
    """``text`` folded (:func:`fold`), with ``where[i]`` the index in ``original`` of the
    folded character ``i`` (and one past the end, so a match's end maps too)."""

    original: str
    text: str
    where: tuple[int, ...]

    @classmethod
    def of(cls, original: str) -> Folded:
        out: list[str] = []
        where: list[int] = []
        space = True  # no leading space
        ascii_only = original.isascii()
        for i, ch in enumerate(original):
            piece = (ch if ascii_only else unicodedata.normalize("NFKC", ch)).casefold()
            for c in piece:
                if _SEPARATOR.match(c):
                    if not space:
                        out.append(" ")
                        where.append(i)
                        space = True
                    continue
                out.append(c)
                where.append(i)
                space = False
        if out and out[-1] == " ":
            out.pop()
            where.pop()
        where.append(len(original))
        return cls(original, "".join(out), tuple(where))

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the folded span ``[start, end)``."""
        if start >= end:
            return self.where[start], self.where[start]
        return self.where[start], self.where[end - 1] + 1

    def find(self, needle: str) -> list[tuple[int, int]]:
        """Every occurrence of the folded ``needle`` (whole words where it starts or ends with a
        letter or digit of a spaced script), as folded spans."""
        found: list[tuple[int, int]] = []
        if not needle:
            return found
        text = self.text
        at = text.find(needle)
        while at >= 0:
            end = at + len(needle)
            if _bounded(text, at, end):
                found.append((at, end))
            at = text.find(needle, at + 1)
        return found


def _spaced(ch: str) -> bool:
    """A letter or digit of a script that separates words with spaces (Latin, digits...)."""
    return ch.isalnum() and ord(ch) < 0x2E80


def _bounded(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    first, last = text[start], text[end - 1]
    if _spaced(first) and _spaced(before):
        return False
    return not (_spaced(last) and _spaced(after))


def fold(text: str) -> str:
    """``text`` as compared: NFKC, case folded, punctuation and spaces one space, stripped."""
    return Folded.of(text).text


# -- numbers -----------------------------------------------------------------------------
_ZH_DIGITS = {ch: i for i, ch in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
_SMALL = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
_EN_SMALL = {w: i for i, w in enumerate(_SMALL.split())}
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_EN_TENS = {w: 10 * (i + 2) for i, w in enumerate(_TENS.split())}
_EN_SCALE = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_EN_WORD = "|".join([*_EN_SMALL, *_EN_TENS, *_EN_SCALE, "and", "a"])
_EN_LAST = "|".join([*_EN_SMALL, *_EN_TENS, *_EN_SCALE])

NUMBER = re.compile(
    r"(?<![0-9A-Za-z.,])(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?P<mult>[kK千万wW](?![a-zA-Z]))?"
    r"(?P<pct>%)?"
    r"|(?P<zh>[零〇一二两三四五六七八九十百千万亿]+)"
    rf"|(?<![a-z])(?P<en>(?:(?:{_EN_WORD})[\s-]+)*(?:{_EN_LAST}))"
    r"(?![a-z])",
    re.IGNORECASE,
)
_MULT = {"k": 1000, "千": 1000, "万": 10_000, "w": 10_000}


def chinese_number(text: str) -> int | None:
    """``三千`` 3000, ``两千五`` 2500 (a digit after 千 means hundreds), ``一千五百`` 1500,
    ``十五`` 15, ``三百五`` 350, ``一万二`` 12000, ``三`` 3; None for text that is not one."""
    total, section, digit, last_unit = 0, 0, None, 1
    for ch in text:
        if ch in _ZH_DIGITS:
            # 一二三: digits read one by one
            digit = _ZH_DIGITS[ch] if digit is None else digit * 10 + _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            unit = _ZH_UNITS[ch]
            section += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
        elif ch in _ZH_BIG:
            section += digit or 0
            total += (section or 1) * _ZH_BIG[ch]
            section, digit, last_unit = 0, None, _ZH_BIG[ch]
        else:
            return None
    if digit is not None:
        # 两千五: a lone digit after a unit is the next unit down (五 = 500)
        section += digit * (last_unit // 10 if last_unit >= 10 and digit < 10 else 1)
    return total + section


def _english_number(text: str) -> int | None:
    total, current, seen = 0, 0, False
    for word in re.split(r"[\s-]+", text.lower()):
        if word in ("and", "a"):
            current = current or (1 if word == "a" else 0)
            continue
        if word in _EN_SMALL:
            current += _EN_SMALL[word]
        elif word in _EN_TENS:
            current += _EN_TENS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word in _EN_SCALE:
            total += (current or 1) * _EN_SCALE[word]
            current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


def numbers_in(text: str) -> list[tuple[float, int, int]]:
    """Every number ``text`` writes, as ``(value, start, end)`` (a percent also as its
    fraction, at the same span)."""
    out: list[tuple[float, int, int]] = []
    for m in NUMBER.finditer(text):
        value: float | None
        if m.group("n") is not None:
            value = float(m.group("n").replace(",", ""))
            mult = m.group("mult")
            if mult:
                value *= _MULT[mult.lower()]
        elif m.group("zh") is not None:
            number = chinese_number(m.group("zh"))
            value = None if number is None else float(number)
        else:
            number = _english_number(m.group("en"))
            value = None if number is None else float(number)
        if value is None:
            continue
        out.append((value, m.start(), m.end()))
        if m.group("pct"):
            out.append((round(value / 100, 6), m.start(), m.end()))
    return out


def number_of(text: str) -> float | None:
    """The number ``text`` is, whole (``"3,000"``, ``"三千"``, ``"3k"``), else None."""
    found = numbers_in(text.strip())
    if len(found) >= 1 and found[0][1] == 0 and found[0][2] == len(text.strip()):
        return found[0][0]
    return None
