"""Article 000 §5.2's degraded answer: the asked day's flights failed, another day has some.

"周五航班暂时不可用，周六有航班，是否调整行程？" is said only when a day failed on its own — a
timeout, an upstream error, a rate limit, or nothing bookable that day (sold out) — and the
bookable flights found are for *another* day (other arguments). The model's own mistakes (an
unknown tool, wrong or malformed arguments) are not a failure of the day: corrected on the same
day, they leave no line in the answer; nor does a retry that succeeds on the same day.

The model asks whether to change the plan, so it does not change it for the user: the other
day's flight is a labelled alternative (备选（需改到周六）), the weather, hotel and budget stay on
the day asked (the answer says so, and the hotel line names its night), and the budget leaves
the unavailable flight out. The other day's fare is given apart, never added to a hotel night
of the day asked (its hotel and weather were not looked up).
"""

from __future__ import annotations

from typing import Any

from .failures import when
from .intent import TripRequest
from .observations import Observation, choose_flight

__all__ = [
    "DAY_FAILURES",
    "alternative_heads",
    "budget_lead",
    "day_failed",
    "fare_line",
    "kept_line",
    "moved",
    "offer_line",
]

#: Failed-result kinds that belong to the day asked (another day may not have them); not the
#: model's own mistakes (unknown_tool, invalid_arguments, invalid_json) nor bad dates.
DAY_FAILURES = frozenset({"tool_error", "timeout", "rate_limited", "cancelled", "not_executed"})


def day_failed(o: Observation) -> bool:
    """Did this flights result fail for its day: a tool failure of that day, or nothing
    bookable (sold out) — but a route with no direct flights at all is not a matter of days."""
    if not o.ok:
        return o.kind in DAY_FAILURES
    data = o.data or {}
    return (
        bool(data) and choose_flight(data)[0] is None and data.get("reason") != "no_direct_flights"
    )


def moved(obs: list[Observation]) -> tuple[Observation, dict[str, Any]] | None:
    """(the asked day's failure, the other day's flights) when a day failed and the bookable
    flights found are for another day; None otherwise (nothing to adjust)."""
    bookable = [o for o in obs if o.ok and o.data and choose_flight(o.data)[0]]
    if not bookable:
        return None
    offered = bookable[-1]
    failed = [o for o in obs if day_failed(o) and o.arguments != offered.arguments]
    if not failed or offered.data is None:
        return None
    return failed[-1], offered.data


# -- the answer's lines (zh, en) -----------------------------------------------------------------
_DAYS_EN = dict(zip("一二三四五六日", ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                                     "Saturday", "Sunday"], strict=True))  # fmt: skip


def _days(req: TripRequest, later: dict[str, Any]) -> tuple[str, str, str, str]:
    """(asked zh, asked en, other zh, other en): 周五 / this Friday, 周六 / Saturday."""
    weekday = str(later.get("weekday", ""))
    other_en = _DAYS_EN.get(weekday[-1:], str(later.get("date", "")))
    return req.date or "当天", req.date or "the day asked", weekday or "另一天", other_en


def offer_line(req: TripRequest, reason: tuple[str, str], later: dict[str, Any]) -> tuple[str, str]:
    """ "周五航班暂时不可用，周六有航班，是否调整行程？" (000 §5.2)."""
    asked, asked_en, other, _ = _days(req, later)
    return (f"航班：{asked}航班暂时不可用（{reason[0]}），{other}有航班，是否调整行程？",
            f"Flights: {asked_en} is unavailable ({reason[1]}); there are flights on "
            f"{when(later, False)}. Shall I change the plan?")  # fmt: skip


def alternative_heads(req: TripRequest, later: dict[str, Any]) -> tuple[str, str]:
    """How the other day's flight is labelled: an alternative, not the plan."""
    _, _, other, other_en = _days(req, later)
    return f"备选（需改到{other}）：", f"Alternative (if you move to {other_en}): "


def kept_line(req: TripRequest, later: dict[str, Any]) -> tuple[str, str]:
    """The rest of the answer stays on the day asked: said once, under the flights."""
    asked, asked_en, other, other_en = _days(req, later)
    looked = [s for s in ("weather", "hotels") if s in req.wants]
    kept = looked + (["cost"] if "cost" in req.wants else [])
    if not kept:
        return "", ""
    zh = _join([_ZH[s] for s in kept], "、", "和")
    en = _join([_EN[s] for s in kept], ", ", " and ")
    again_zh = (
        f"；若改到{other}，需要重新查询{other}的{_join([_ZH[s] for s in looked], '、', '和')}"
    )
    again_en = (f"; moving to {other_en} means looking up {other_en}'s "
                f"{_join([_EN[s] for s in looked], ', ', ' and ')} again")  # fmt: skip
    return (f"（以下{zh}仍按原定的{asked}{again_zh if looked else ''}。）",
            f"(The {en} below {'is' if len(kept) == 1 else 'are'} still for {asked_en}, as asked"
            f"{again_en if looked else ''}.)")  # fmt: skip


_ZH = {"weather": "天气", "hotels": "酒店", "cost": "预算"}
_EN = {"weather": "weather", "hotels": "hotel", "cost": "budget"}


def _join(words: list[str], sep: str, last: str) -> str:
    return sep.join(words[:-1]) + last + words[-1] if len(words) > 1 else "".join(words)


def budget_lead(req: TripRequest) -> tuple[str, str]:
    """What the budget line leaves out: the flight of the day asked, which is unavailable."""
    asked, asked_en = req.date or "当天", req.date or "the day asked"
    return f"不含机票（{asked}航班暂不可用），", f"without the flight ({asked_en} is unavailable), "


def fare_line(req: TripRequest, later: dict[str, Any]) -> tuple[str, str]:
    """The other day's fare, apart from the total: never added to the asked day's hotel."""
    best, _ = choose_flight(later)
    if best is None:
        return "", ""
    _, _, other, other_en = _days(req, later)
    hotel = "hotels" in req.wants
    return (f"若改乘{other}航班，需另付机票 {best['price']} 元"
            + (f"，酒店也要按{other}重新查询后再算总价。" if hotel else "。"),
            f"Moving to {other_en} adds the {best['price']} CNY fare"
            + (f"; the hotel would have to be looked up for {other_en} before a total." if hotel
               else "."))  # fmt: skip
