"""The parts of TravelModel's answer that depend on its instructions and on the tools offered:
the style the cues ask for, the one-line summary (no output rules), weather comparisons, and
what it says about tools it was not given or told not to use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .intent import TripRequest
from .observations import choose_flight, choose_hotel, money

__all__ = ["SECTIONS", "Style", "compare_weather", "missing_tools", "no_tools", "summary_line"]

SECTIONS = ("flights", "weather", "hotels", "cost")
_NAMES = {"flights": ("航班", "flights"), "weather": ("天气", "weather"),
          "hotels": ("酒店", "hotels"), "cost": ("总价", "the total")}  # fmt: skip


@dataclass
class Style:
    """How to write the answer, from the instruction cues (see ``TravelModel.rules()``)."""

    detailed: tuple[str, ...] = SECTIONS  # sections listed in full (the output rules)
    alternatives: bool = True  # over budget: offer the cheapest combination
    no_tools: bool = False  # the instructions said not to call tools
    missing: list[str] = field(default_factory=list)  # wanted, but no tool was offered
    roles: dict[str, str] = field(default_factory=dict)  # offered tool name -> section
    stopped: bool = False  # the wrap-up call: tools off after max_iterations
    flight_how: str = "earliest"  # the choice knobs, resolved for this user (.reading.Turn)
    hotel_how: str = "value"
    flight_room: float | None = None  # within_budget: what the fare may cost
    hotel_room: float | None = None  # within_budget: what the stay may cost
    leave_out: tuple[str, ...] = ()  # sections the instructions leave out
    form: str = "lines"  # lines / list / table / prose
    budget_stop: bool = False  # over budget: the verdict only, then a question
    booking: str = "none"  # confirm_booking: none / ask / direct
    assumed: str = ""  # missing=assume: the day assumed, said at the top of the answer
    skipped: tuple[str, ...] = ()  # sections the instructions said not to look up (skip knob)
    dress: str = "asked"  # the dress knob: clothing advice when asked, or with every forecast


def summary_line(
    req: TripRequest, by: dict[str, Any], sections: list[str], style: Style | None = None
) -> str:
    """One sentence for ``sections``: what a model writes when no output rule asks for more
    (000 §6: without the rules it leaves things out)."""
    zh = req.language == "zh"
    style = style or Style()
    parts: list[str] = []
    flight, _ = choose_flight(by.get("flights"), style.flight_how, style.flight_room)
    if "flights" in sections and flight:
        parts.append(f"推荐航班 {flight['flight_no']}" if zh else f"take {flight['flight_no']}")
    weather = by.get("weather")
    if "weather" in sections and weather and weather.get("condition"):
        parts.append(f"{weather['city']}当天{weather['condition']}" if zh
                     else f"expect {weather['condition_en']} weather")  # fmt: skip
    hotel, _ = choose_hotel(by.get("hotels"), req, style.hotel_how, style.hotel_room)
    if "hotels" in sections and hotel:
        parts.append(f"住{hotel['name']}" if zh else f"stay at {hotel['name_en']}")
    cost = by.get("cost")
    if "cost" in sections and cost:
        total = money(cost["total"])
        verdict = ""
        if cost.get("budget") is not None:
            ok = cost["within_budget"]
            verdict = ("，在预算内" if ok else "，超出预算") if zh else (
                ", within budget" if ok else ", over budget")  # fmt: skip
        parts.append(f"合计 {total} 元{verdict}" if zh else f"{total} CNY in total{verdict}")
    if not parts:
        return ""
    return "；".join(parts) + "。" if zh else parts[0][:1].upper() + "; ".join(parts)[1:] + "."


def compare_weather(
    req: TripRequest, days: list[dict[str, Any]], city: Callable[[str], str] = str
) -> str:
    """Which of the cities is colder (by the day's low, then its high)."""
    zh = req.language == "zh"
    if len(days) < 2:
        return ""
    ranked = sorted(days, key=lambda d: (d["temp_min_c"], d["temp_max_c"]))
    cold, warm = ranked[0], ranked[-1]
    if (cold["temp_min_c"], cold["temp_max_c"]) == (warm["temp_min_c"], warm["temp_max_c"]):
        return "比较：两地气温相同。" if zh else "Comparison: the same temperatures."
    if zh:
        return (f"比较：{cold['city']}更冷（最低 {cold['temp_min_c']}°C），"
                f"{warm['city']}更暖和（最低 {warm['temp_min_c']}°C）。")  # fmt: skip
    return (f"Comparison: {city(cold['city'])} is colder (low {cold['temp_min_c']} °C) than "
            f"{city(warm['city'])} (low {warm['temp_min_c']} °C).")  # fmt: skip


def missing_tools(req: TripRequest, missing: list[str]) -> str:
    """What it says when a needed tool is not in the request: it never invents the data."""
    if not missing:
        return ""
    zh = req.language == "zh"
    names = [_NAMES[m][0 if zh else 1] for m in missing if m in _NAMES]
    if zh:
        return f"没有可用的{'、'.join(names)}查询工具，这部分无法查询（我不会编造）。"
    return f"No tool for {', '.join(names)} was offered, so I cannot look that up (or guess)."


def no_tools(req: TripRequest) -> str:
    """The answer when the instructions forbid tools (and nothing is invented)."""
    if req.language == "zh":
        return ("按照指示，我这次不调用任何工具，因此无法查询实时的航班、天气或酒店信息，"
                "也不会凭记忆编造。需要查询时，请允许我使用工具。")  # fmt: skip
    return ("As instructed, I am not calling any tools this time, so I cannot look up live "
            "flights, weather or hotels, and I will not make them up. Let me use the tools "
            "when you want them checked.")  # fmt: skip
