"""Relative dates, normalised inside the tools (article 000 §4.3: not by the model).

``resolve_date("周五", today)`` understands ISO dates (2025-01-10, 2025/1/10), 1月10日/1月10号,
15号 (this month, or next month once passed), 下个月15号, 今天/明天/后天/大后天, 周五/星期五/
礼拜五, 这周五/本周五, 下周一/下星期一, 周末/这周末/下周末 (Saturday), and English: today,
tomorrow, the day after tomorrow, Friday, this Friday, next Monday, this weekend, next weekend,
January 20 / Jan 20th / 20 January, the 15th.

``vague_date(text)`` finds a date the user gave but that cannot be pinned to a day ("下个月",
"改天", "next month", "someday"): the model asks which day instead of guessing one.

A weekday name means the next such day on or after ``today``; "下周X"/"next X" means that
day in the following week (Monday-based weeks).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

__all__ = ["DATE_PATTERN", "DEFAULT_TODAY", "find_date", "resolve_date", "vague_date"]

#: The fixed reference date of the examples: Monday 2025-01-06, so 周五 is 2025-01-10 as in
#: article 000. Pass ``today=`` to the tools or the agent to change it.
DEFAULT_TODAY = date(2025, 1, 6)

_ZH_DAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_EN_DAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "weekend": 5,
}  # fmt: skip
_ZH_OFFSET = {"今天": 0, "今日": 0, "今早": 0, "今晚": 0, "明天": 1, "明日": 1, "明早": 1,
              "明晚": 1, "后天": 2, "大后天": 3}  # fmt: skip
_EN_OFFSET = {"today": 0, "tomorrow": 1, "the day after tomorrow": 2, "day after tomorrow": 2}

_MONTHS = {m: i + 1 for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split())}  # noqa: SIM905  # fmt: skip
_ISO = r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{4}年\d{1,2}月\d{1,2}[日号]"
_MD = r"\d{1,2}月\d{1,2}[日号]|(?:(?:下个?月|本月|这个月)|(?<![\d月]))\d{1,2}号"
_EN_MD = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?(?![\da-z])|"
    r"(?<!\d)\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
    r"\bthe\s+\d{1,2}(?:st|nd|rd|th)(?![a-z])"
)
# "一下周六" is "一下" + "周六" (have a look at Saturday), not "下周六" (next Saturday).
_ZH_WEEK = r"(?:下下|(?<!一)下个?|这个?|本)?(?:周|星期|礼拜)[一二三四五六日天末]"
_ZH_REL = r"大后天|后天|明天|明日|明早|明晚|今天|今日|今早|今晚"
_EN = (
    r"(?:the\s+)?day\s+after\s+tomorrow|today|tomorrow|"
    r"(?:this\s+(?:coming\s+)?|next\s+)?"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)"
)
#: Finds a date expression inside free text (used by the example model).
DATE_PATTERN = re.compile(rf"{_ISO}|{_MD}|{_EN_MD}|{_ZH_WEEK}|{_ZH_REL}|{_EN}", re.IGNORECASE)
#: Dates a user gives that name no single day: the model asks rather than guess.
_VAGUE = re.compile(
    r"下下?个?月|月底|月初|月中|改天|过几天|过两天|过阵子|以后|将来|某天|哪天都行|下辈子|明年|"
    r"\bnext\s+month\b|\bsomeday\b|\bsome\s+day\b|\bsometime\b|\bsoon\b|\blater\b|"
    r"\bin\s+a\s+few\s+days\b|\bnext\s+year\b|\bend\s+of\s+the\s+month\b",
    re.IGNORECASE,
)


def _weekday(today: date, target: int, weeks_ahead: int) -> date:
    if weeks_ahead == 0:
        return today + timedelta((target - today.weekday()) % 7)
    monday = today - timedelta(today.weekday()) + timedelta(7 * weeks_ahead)
    return monday + timedelta(target)


def resolve_date(text: str, today: date = DEFAULT_TODAY) -> date:
    """Turn a date expression into a date, or raise ValueError saying what is accepted."""
    raw = text.strip()
    t = raw.lower()
    m = re.fullmatch(r"(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})[日号]?", t)
    if m:
        return date(int(m[1]), int(m[2]), int(m[3]))
    m = re.fullmatch(r"(\d{1,2})月(\d{1,2})[日号]", t)
    if m:
        return _month_day(today, int(m[1]), int(m[2]))
    m = re.fullmatch(r"(下个?月|本月|这个月)?(\d{1,2})号", t)
    if m:
        month = today.month + (1 if (m[1] or "").startswith("下") else 0)
        if m[1] is None and int(m[2]) < today.day:
            month += 1  # "15号" once the 15th has passed: next month's
        return _month_day(today, (month - 1) % 12 + 1, int(m[2]), today.year + (month - 1) // 12)
    m = re.fullmatch(
        r"([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?|(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+)", t
    )
    if m and (m[1] or m[4])[:3] in _MONTHS:
        return _month_day(today, _MONTHS[(m[1] or m[4])[:3]], int(m[2] or m[3]))
    m = re.fullmatch(r"the\s+(\d{1,2})(?:st|nd|rd|th)", t)
    if m:
        return resolve_date(f"{m[1]}号", today)
    if t in _ZH_OFFSET:
        return today + timedelta(_ZH_OFFSET[t])
    if t in _EN_OFFSET or t.removeprefix("the ") in _EN_OFFSET:
        return today + timedelta(_EN_OFFSET[t.removeprefix("the ")])
    m = re.fullmatch(r"(下下|下个?|这个?|本)?(?:周|星期|礼拜)([一二三四五六日天末])", t)
    if m:
        weeks = {"下下": 2, "下": 1, "下个": 1}.get(m[1] or "", 0)
        return _weekday(today, _ZH_DAYS[m[2]], weeks)
    m = re.fullmatch(r"(this\s+(?:coming\s+)?|next\s+)?(\w+)", t)
    if m and m[2] in _EN_DAYS:
        return _weekday(today, _EN_DAYS[m[2]], 1 if (m[1] or "").startswith("next") else 0)
    raise ValueError(
        f"cannot read the date {raw!r}; use YYYY-MM-DD, or 今天/明天/后天, 周一…周日, 下周X, "
        "周末, today/tomorrow, Friday, next Monday"
    )


def _month_day(today: date, month: int, day: int, year: int | None = None) -> date:
    """That day of the month: this year's, or next year's once it has passed."""
    try:
        candidate = date(year or today.year, month, day)
        if year is None and candidate < today:
            candidate = date(today.year + 1, month, day)
    except ValueError:
        raise ValueError(f"there is no day {day} in month {month}") from None
    return candidate


def vague_date(text: str) -> str | None:
    """A date expression that names no single day ("下个月", "改天", "next month"), or None."""
    m = _VAGUE.search(text)
    return m.group(0) if m else None


def find_date(text: str) -> str | None:
    """The first date expression in ``text``, as written (e.g. '周五'), or None."""
    m = DATE_PATTERN.search(text)
    return m.group(0) if m else None
