"""When TravelModel asks instead of calling a tool, and how the knobs shape its answer.

It asks before any call when the user gave a date that names no single day ("下个月", "改天",
"next month"), or wants flights or a hotel without saying when (``missing=ask_one``: that one
question); ``missing=ask_all`` asks for everything missing at once (route, day, nights),
``missing=assume`` asks nothing and assumes the stated defaults; ``dates=ask`` asks for a
calendar date when the user gave a relative one. Weather with no date means today. Unknown
cities are looked up once and the tool's ``unknown_city`` code turns into an honest "no data"
plus a question (see answer.py).
"""

from __future__ import annotations

import re

from .intent import TripRequest
from .knobs import SECTIONS
from .phrases import say
from .reading import Turn
from .summary import Style

__all__ = ["answer_style", "clarifying_question", "missing_slots", "slot_name"]


_CALENDAR = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}月\d{1,2}[日号]|[A-Za-z]+\.? \d{1,2}\b"
)


def missing_slots(req: TripRequest) -> list[str]:
    """What a trip request lacks, in the order a question names it."""
    out = []
    if "flights" in req.wants and not req.origin:
        out.append("origin")
    if {"flights", "hotels", "weather"} & set(req.wants) and not req.destination:
        out.append("destination")
    if {"flights", "hotels"} & set(req.wants) and not req.date:
        out.append("date")
    if "hotels" in req.wants and not req.nights_stated:
        out.append("nights")
    return out


def slot_name(names: list[str], slot: str, req: TripRequest) -> str:
    """The words for a missing slot (the day: 出发 for flights, 入住 for a hotel)."""
    if slot == "date" and "flights" not in req.wants:
        return names[4]
    return names[("origin", "destination", "date", "nights").index(slot)]


def clarifying_question(turn: Turn, language: str) -> tuple[str, str] | None:
    """(the rule, the question) to ask before calling anything, or None."""
    req, policy = turn.request, turn.policy
    if turn.observations or not req.wants:
        return None
    if req.vague and not req.date and policy.missing != "assume":
        return "unclear_date", say("ask_vague", language, vague=req.vague)
    if policy.missing == "ask_all":
        lacking = missing_slots(req)
        if lacking:
            names = say("slot_names", language).split("|")
            named = [slot_name(names, s, req) for s in lacking]
            return "missing", say("ask_all", language, what="、".join(named)
                                  if language == "zh" else ", ".join(named))  # fmt: skip
        return None
    if policy.missing == "assume":
        return None
    needs_day = "flights" in req.wants and req.origin and req.destination
    needs_day = needs_day or ("hotels" in req.wants and req.destination)
    if needs_day and not req.date:
        key = "ask_day_flight" if "flights" in req.wants else "ask_day_hotel"
        return "missing", say(key, language)
    if policy.dates == "ask" and req.date and not _CALENDAR.search(req.date) and needs_day:
        return "dates", say("ask_calendar", language, day=req.date)
    return None


def answer_style(turn: Turn) -> Style:
    """The answer's shape from the knobs: sections, length, form, budget, choices, tools."""
    policy = turn.policy
    detailed: tuple[str, ...] = policy.sections
    if policy.length == "brief":
        detailed = ()
    elif policy.length == "full":
        detailed = SECTIONS
    never = policy.tools == "never"
    return Style(
        detailed=detailed,
        alternatives=policy.budget == "alternative",
        no_tools=never,
        missing=[] if never else list(turn.missing),
        roles={spec.name: role for role, spec in turn.menu.specs.items()},
        stopped=not turn.menu and bool(turn.observations),
        flight_how=turn.flight_choice,
        hotel_how=turn.hotel_choice,
        leave_out=policy.leave_out,
        form=policy.form,
        budget_stop=policy.budget == "stop",
        booking=policy.confirm_booking,
        skipped=tuple(s for s in policy.skip if s in turn.request.wants),
        dress=policy.dress,
    )
