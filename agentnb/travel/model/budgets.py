"""A budget in the user's words: an amount of money and the words that make it a limit.

Read from text whose numbers are already digits (:func:`.normal.numerals`: 两千 → 2000,
two thousand → 2000), so 预算两千以内, 总共别超过2000, 一千五左右, 1500块钱内, "under 3k",
"¥3,000", "1800 bucks" and "capped at three thousand" are all budgets; a date (1月18号), a
count of nights or a flight number (MU5101) never is. Words that mean a budget when no amount
could be read (预算不多) are :data:`BUDGET_WORDS`: the request then lists the budget as unread.
"""

from __future__ import annotations

import re

__all__ = ["BUDGET_WORDS", "read_budget"]

#: A number (1500, 3,000, 2.5), never inside a word, a date or a flight number; then what may
#: follow it: a scale (k, 千, 万) and a currency. Each part is anchored where the previous one
#: ended, so a run of spaces is read once, whatever its length (reading stays linear).
_NUMBER = re.compile(r"(?<![A-Za-z\d.:/-])(\d{1,3}(?:,\d{3})+|\d++(?:\.\d+)?)")
_TAIL = re.compile(
    r"\s*+(k\b|千|万|thousand\b)?\s*+(元|块钱|块|\brmb\b|\bcny\b|\byuan\b|\bbucks\b|\bdollars\b)?",
    re.IGNORECASE,
)
#: Words around an amount that make it a budget (a limit, a total, what there is to spend).
_BUDGET_BEFORE = re.compile(
    r"(?:预算|总共|一共|全部|总计|费用|花费|花销|总价|不超过|别超过|不要超过|别超出|不超出|不要超出|"
    r"最多|顶多|控制在|只有|手头|能花|花|budget|spend|under|within|below|less than|up to|at most|"
    r"max(?:imum)?|no more than|capped at|cap(?: of)?|around|about|roughly|for|have|got|afford)"
    r"[^\d。！？!?]{0,6}$",
    re.IGNORECASE,
)
_BUDGET_AFTER = re.compile(
    r"\s*+(?:以内|之内|以下|内|左右|上下|封顶|够吗|够|能搞定|tops\b|max\b|or less\b|all in\b|"
    r"budget\b|to spend\b|total\b)",
    re.IGNORECASE,
)
#: Words that say a budget was meant even when no amount could be read ("预算不多").
BUDGET_WORDS = re.compile(r"预算|budget|花费|spend", re.IGNORECASE)
#: What follows a number that is not money (dates, nights, times, people, ratings).
_NOT_MONEY = re.compile(
    r"\s*(?:月|号|日|年|晚|夜|点|人|位|星|个晚|天|:|nights?\b|pm\b|am\b|people\b)", re.I
)


def read_budget(text: str) -> float | None:
    """The budget: an amount of 100 or more with a currency, or with words that make it a
    limit or a total (预算2000以内, 总共别超过2000, 1500左右, 1500块钱内, under 3k, ¥3,000,
    1800 bucks). ``text`` has its numbers in digits already (:func:`.normal.numerals`).
    Linear in the length of ``text``: every pattern is anchored at a number or bounded."""
    for m in _NUMBER.finditer(text):
        tail = _TAIL.match(text, m.end())
        assert tail is not None  # every part of it is optional
        if _NOT_MONEY.match(text[m.end(1) : m.end(1) + 4]) and not tail.group(1):
            continue
        value = float(m.group(1).replace(",", ""))
        scale = (tail.group(1) or "").lower()
        value *= {"k": 1000, "千": 1000, "万": 10000, "thousand": 1000}.get(scale, 1)
        before = _BUDGET_BEFORE.search(text[max(0, m.start(1) - 16) : m.start(1)].rstrip(" ¥￥"))
        after = _BUDGET_AFTER.match(text, tail.end())
        if value >= 100 and (before or after or tail.group(2) or _currency_before(text, m.start())):
            return value
    return None


def _currency_before(text: str, start: int) -> bool:
    """A currency sign or code (¥, RMB, CNY) right before ``start``, maybe spaces between
    (a run of spaces is walked back once: it comes before one number only)."""
    at = start
    while at > 0 and text[at - 1].isspace():
        at -= 1
    code = text[max(0, at - 3) : at].lower()
    whole = at < 4 or not (text[at - 4].isalnum() or text[at - 4] == "_")
    return text[at - 1 : at] in ("¥", "￥") or (code in ("rmb", "cny") and whole)
