"""Article 000 §5.2's degraded answer: the asked day's flights failed, another day has some.

"周五航班暂时不可用，周六有航班，是否调整行程？" is said only when a day failed on its own — a
timeout, an upstream error, a rate limit, or nothing bookable that day (sold out) — and the
bookable flights found are for *another* day (other arguments). The model's own mistakes (an
unknown tool, wrong or malformed arguments) are not a failure of the day: corrected on the same
day, they leave no line in the answer; nor does a retry that succeeds on the same day.
"""

from __future__ import annotations

from typing import Any

from .observations import Observation, choose_flight

__all__ = ["DAY_FAILURES", "day_failed", "moved"]

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
