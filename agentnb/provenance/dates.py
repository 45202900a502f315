"""Dates as a reader compares them: the day an expression names (part of the one normaliser).

``2025-01-10``, ``2025/1/10``, ``2025年1月10日``, ``1月10日``/``1月10号``, ``January 10``,
``10 January``, ``the 13th of May 2024``, and, against a reference ``today``, the relative
forms the travel tools accept (今天/明天/后天, 周五/星期五/礼拜五, 这周五/下周一, 周末,
today/tomorrow, Friday/next Monday/this weekend). Without ``today`` a weekday still names
the day of the week (a partial match).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = ["DATE", "Day", "dates_in", "day_of"]


@dataclass(frozen=True, slots=True)
class Day:
    """The day a date expression names, as far as it tells: ``year``/``month``/``day`` when
    written or resolved, else ``weekday`` (0 = Monday) alone."""

    year: int | None = None
    month: int | None = None
    day: int | None = None
    weekday: int | None = None

    def agrees(self, other: Day) -> float:
        """How surely two expressions name the same day: 1.0 the same date, 0.9 the same month
        and day (one has no year), 0.6 the same weekday only, 0 different."""
        if self.month is not None and other.month is not None:
            if (self.month, self.day) != (other.month, other.day):
                return 0.0
            if self.year is not None and other.year is not None:
                return 1.0 if self.year == other.year else 0.0
            return 0.9
        mine, theirs = self.weekday, other.weekday
        if mine is None and self.month is not None and self.year is not None:
            mine = date(self.year, self.month, self.day or 1).weekday()
        if theirs is None and other.month is not None and other.year is not None:
            theirs = date(other.year, other.month, other.day or 1).weekday()
        return 0.6 if mine is not None and mine == theirs else 0.0


_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MON = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_ZH_WD = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_EN_WD = {d: i for i, d in enumerate(_WEEKDAYS)}
_OFFSETS = {
    **{"今天": 0, "今日": 0, "今晚": 0, "明天": 1, "明日": 1, "明晚": 1, "后天": 2, "大后天": 3},
    **{"today": 0, "tonight": 0, "tomorrow": 1, "day after tomorrow": 2},
}
DATE = re.compile(
    r"(?<!\d)(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})[日号]?(?!\d)"
    r"|(?<!\d)(?P<zm>\d{1,2})月(?P<zd>\d{1,2})[日号]"
    rf"|\b(?P<em>{_MON})\s+(?P<ed>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<ey>\d{{4}}))?"
    rf"|\b(?P<ed2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<em2>{_MON})(?:\s+(?P<ey2>\d{{4}}))?"
    r"|(?P<zw>(?:下下|(?<!一)下个?|这个?|本)?(?:周|星期|礼拜)[一二三四五六日天末])"
    r"|(?P<zr>大后天|后天|明天|明日|明晚|今天|今日|今晚)"
    r"|\b(?P<er>(?:the\s+)?day\s+after\s+tomorrow|today|tonight|tomorrow"
    r"|(?:this\s+(?:coming\s+)?|next\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday"
    r"|sunday|weekend))\b",
    re.IGNORECASE,
)


def _weekday(today: date, target: int, weeks: int) -> date:
    if weeks == 0:
        return today + timedelta((target - today.weekday()) % 7)
    return today - timedelta(today.weekday()) + timedelta(7 * weeks + target)


def _day(m: re.Match[str], today: date | None) -> Day | None:
    g = m.group
    try:
        if g("y"):
            return Day(int(g("y")), int(g("m")), int(g("d")))
        if g("zm"):
            return Day(None, int(g("zm")), int(g("zd")))
        if g("em") or g("em2"):
            month = (g("em") or g("em2"))[:3].lower()
            index = next(i for i, name in enumerate(_MONTHS) if name.startswith(month))
            year = g("ey") or g("ey2")
            return Day(int(year) if year else None, index + 1, int(g("ed") or g("ed2")))
    except (ValueError, StopIteration):
        return None
    text = (g("zw") or g("zr") or g("er") or "").lower()
    text = re.sub(r"\s+", " ", text).removeprefix("the ")
    if text in _OFFSETS:
        if today is None:
            return None
        when = today + timedelta(_OFFSETS[text])
        return Day(when.year, when.month, when.day)
    zh = re.fullmatch(r"(下下|下个?|这个?|本)?(?:周|星期|礼拜)(.)", text)
    if zh:
        target, weeks = _ZH_WD[zh[2]], {"下下": 2, "下": 1, "下个": 1}.get(zh[1] or "", 0)
    else:
        en = re.fullmatch(r"(this (?:coming )?|next )?(\w+)", text)
        if not en:
            return None
        name = en[2]
        target = 5 if name == "weekend" else _EN_WD[name]
        weeks = 1 if (en[1] or "").startswith("next") else 0
    if today is None:
        return Day(weekday=target) if weeks == 0 else None
    when = _weekday(today, target, weeks)
    return Day(when.year, when.month, when.day)


def dates_in(text: str, today: date | None = None) -> list[tuple[Day, int, int]]:
    """Every date expression in ``text`` as ``(Day, start, end)``; relative ones resolved
    against ``today`` (a weekday without ``today`` keeps its weekday only)."""
    out = []
    for m in DATE.finditer(text):
        day = _day(m, today)
        if day is not None:
            out.append((day, m.start(), m.end()))
    return out


def day_of(text: str, today: date | None = None) -> Day | None:
    """The day ``text`` names when it is one date expression, whole; else None."""
    text = text.strip()
    found = dates_in(text, today)
    if len(found) == 1 and found[0][1] == 0 and found[0][2] == len(text):
        return found[0][0]
    return None
