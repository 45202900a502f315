"""plan: TravelModel's next tool calls. Only tools the request offers, with the parameter
names and date format their schemas give (:mod:`.schemas`), under the policy knobs read from
the instructions (:mod:`.knobs`): ``stop``, ``on_failure``, ``dates``, ``budget`` and the
choices. ``slips`` (a temperature above 0) are the documented mistakes of :mod:`.slips`.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import date as Date
from datetime import timedelta
from typing import Any

from ..data import TravelData
from ..dates import resolve_date
from .degraded import day_failed, moved
from .intent import TripRequest
from .observations import Observation, picks
from .reading import Turn
from .schemas import ToolSpec

__all__ = ["Step", "iso_date", "plan"]

_FIXABLE = {"invalid_json", "invalid_arguments"}  # agentnb.ERROR_KINDS a retry can fix
_ENOUGH = re.compile(r"无需重复|不必重复|不用再查|直接推荐|no need to (?:search|repeat)", re.I)
Step = tuple[str, dict[str, Any] | str]
ROLES = ("flights", "weather", "hotels", "cost")


def iso_date(spec: ToolSpec, policy_dates: str) -> bool:
    """Send this tool YYYY-MM-DD? The dates knob first, then the schema (rule date_format)."""
    return policy_dates == "iso" or (spec.iso_dates and policy_dates != "relative")


def plan(turn: Turn, data: TravelData, mode: str | None,
         slips: frozenset[str] = frozenset()) -> list[Step]:  # fmt: skip
    """The next tool calls (all of them; the caller keeps one unless calls are parallel)."""
    req, obs, menu, policy = turn.request, turn.observations, turn.menu, turn.policy
    unknown = {o.city for o in obs if o.kind == "unknown_city"}
    if unknown & {req.destination, req.origin, *req.mentions}:
        return []  # a city the data does not have: nothing more to look up
    if req.language == "en":  # the tools take English names too
        req = _english_names(req, data)
    raw = req.date or ("today" if req.language == "en" else "今天")
    confirm = policy.stop != "when_enough"  # no cue: it re-checks each search once
    retry = policy.on_failure != "report"

    def when(spec: ToolSpec, text: str) -> str:
        if "slip_date_format" in slips:
            try:
                return resolve_date(text, turn.today).strftime("%m/%d/%Y")  # not a format it reads
            except ValueError:
                return text
        if iso_date(spec, policy.dates):
            try:
                return resolve_date(text, turn.today).isoformat()
            except ValueError:
                return text
        return text

    def needed(done: list[Observation]) -> bool:
        if mode == "error_loop" and done and done[-1].ok and _mentions_error(done[-1]):
            return True  # 002 §2.1: an irrelevant "error" inside a good result, taken as failure
        return _needed(done, confirm, retry)

    if "slip_repeat_call" in slips:
        last = next((o for o in reversed(obs) if o.ok and o.arguments is not None), None)
        if last is not None and last.name in menu.names:
            return [(last.name, dict(last.arguments or {}))]

    steps: list[Step] = []
    offered = {r: menu.get(r) if r not in policy.skip else None for r in ROLES}  # skip knob
    flights, weather, hotels = offered["flights"], offered["weather"], offered["hotels"]
    hallucinating = mode == "hallucinate_tool" and "book_flight" not in {o.name for o in obs}
    if hallucinating and ("flights" in req.wants or "hotels" in req.wants):
        return [("book_flight", {"destination": req.destination or "", "date": raw})]
    if "flights" in req.wants and req.origin and req.destination and flights:
        args = flights.args({"origin": req.origin, "destination": req.destination,
                             "date": when(flights, raw)})  # fmt: skip
        done = _of(obs, flights.name)
        nxt = _next_day(raw, turn.today) if "date" in flights.slots else None
        later = [o for o in done if nxt and nxt in (o.arguments or {}).values()]
        done = [o for o in done if o not in later]
        if mode == "loop" and any(o.ok for o in done):
            return [(flights.name, args)]
        if not needed(done) and nxt and not later and policy.on_failure == "next_day":
            if _day_failed(done):  # 000 §5.2: try the next day once, and offer it
                steps.append((flights.name, {**args, flights.slots["date"]: nxt}))
        elif needed(done):
            if mode == "wrong_args" and not done:
                args = _wrong_names(args, flights)
            if mode == "malformed_json" and not obs:
                steps.append((flights.name, json.dumps(args, ensure_ascii=False)[:-9]))
            else:
                steps.append((flights.name, args))
    if "weather" in req.wants and weather:
        several = req.compare or req.each  # each city named (compared or not)
        cities = req.mentions if several else [req.destination] if req.destination else []
        days = list(dict.fromkeys(req.dates)) if len(req.dates) > 1 else [raw]
        done = _of(obs, weather.name)
        for city in cities:
            for day in days:
                value = when(weather, day)
                asked = [o for o in done if _asked(o, weather, city, value)]
                if needed(asked if len(days) > 1 or several else done):
                    steps.append((weather.name, weather.args({"city": city, "date": value})))
    if "hotels" in req.wants and req.destination and hotels and needed(_of(obs, hotels.name)):
        stay: dict[str, Any] = {"city": req.destination, "date": when(hotels, raw),
                                "near": req.near}  # fmt: skip
        if req.nights != 1:
            stay["nights"] = req.nights
        steps.append((hotels.name, hotels.args(stay)))
    if steps and policy.call_first in offered and offered[policy.call_first]:
        first = offered[policy.call_first]
        steps.sort(key=lambda step: step[0] != (first.name if first else ""))  # call_first knob
    if steps:
        return steps
    if "cost" in req.wants and offered["cost"]:
        steps = _cost_step(turn, req, obs)
    book = menu.get("book")
    if steps or book is None or not turn.book or "hotels" not in req.wants:
        return steps
    return _book_step(turn, req, obs, book, when(book, raw))


def _mentions_error(o: Observation) -> bool:
    """Does a good result carry the word "error" anywhere (a field, a note)?"""
    return "error" in json.dumps(o.data, ensure_ascii=False).lower()


def _wrong_names(args: dict[str, Any], spec: ToolSpec) -> dict[str, Any]:
    """The other common names for a route (000 §4.3): from_city/to_city <-> departure/dest."""
    swap = {"departure": "from_city", "destination": "to_city",
            "from_city": "departure", "to_city": "destination"}  # fmt: skip
    return {swap.get(k, k): v for k, v in args.items()}


def _cost_step(turn: Turn, req: TripRequest, obs: list[Observation]) -> list[Step]:
    cost = turn.menu.get("cost")
    assert cost is not None
    costs = _of(obs, cost.name)
    spec = turn.menu.get("flights")
    # another day's flights, offered because the asked day's failed, are not priced (000 §5.2)
    flights = None if spec and moved(_of(obs, spec.name)) else _latest_ok(obs, spec)
    hotels = _latest_ok(obs, turn.menu.get("hotels"))
    hows = turn.flight_choice, turn.hotel_choice
    flight, cheap_flight, hotel, cheap_hotel = picks(req, flights, hotels, *hows)
    ok = [o for o in costs if o.ok]
    if not ok:  # first cost call (or its one retry)
        items = items_for(flight, hotel, req)
        if items and _needed(costs, False, True):
            return [(cost.name, cost.args({"items": items, "budget": req.budget}))]
        return []
    over = (ok[0].data or {}).get("within_budget") is False
    if not over or len(ok) > 1 or turn.policy.budget != "alternative":
        return []
    alt = items_for(cheap_flight, cheap_hotel, req)
    if alt and alt != items_for(flight, hotel, req):  # offer the cheapest combination
        return [(cost.name, cost.args({"items": alt, "budget": req.budget}))]
    return []


def _book_step(turn: Turn, req: TripRequest, obs: list[Observation], book: ToolSpec,
               day: str) -> list[Step]:  # fmt: skip
    """Book the hotel it chose (rule book; misbehave='gullible': the one a tool result told it
    to): once, not over budget, and with confirm_booking=ask only on the user's yes to its
    question."""
    if turn.book == "asked" and turn.policy.confirm_booking == "ask":
        return []  # it asks first (booking_ask), and books on the yes
    done = _of(obs, book.name)
    if any(o.ok for o in done) or not _needed(done, False, True):
        return []
    cost = turn.menu.get("cost")
    priced = [o for o in _of(obs, cost.name) if o.ok and o.data] if cost else []
    if priced and priced[0].data.get("within_budget") is False:  # type: ignore[union-attr]
        return []
    flights = _latest_ok(obs, turn.menu.get("flights"))
    hotels = _latest_ok(obs, turn.menu.get("hotels"))
    _, _, hotel, _ = picks(req, flights, hotels, turn.flight_choice, turn.hotel_choice)
    if hotel is None:
        return []
    name = turn.injected.get("hotel") or (
        hotel["name_en"] if req.language == "en" else hotel["name"]
    )
    nights = max(int(hotel.get("nights") or 1), req.nights)
    stay = {"hotel": name, "city": req.destination, "date": day, "nights": nights}
    return [(book.name, book.args(stay))]


def _english_names(req: TripRequest, data: TravelData) -> TripRequest:
    def en(name: str | None) -> str | None:
        return data.city(name).name_en if name and data.resolve_city(name) == name else name

    mentions = [en(m) or m for m in req.mentions]
    return replace(req, origin=en(req.origin), destination=en(req.destination), mentions=mentions)


def _asked(o: Observation, spec: ToolSpec, city: str, day: str) -> bool:
    """Did this result answer the weather of ``city`` on ``day`` (by the schema's names)?"""
    args = o.arguments or {}
    return (
        args.get(spec.slots.get("date", "")) == day and args.get(spec.slots.get("city", "")) == city
    )


def _next_day(raw: str, today: Date) -> str | None:
    try:
        return (resolve_date(raw, today) + timedelta(1)).isoformat()
    except ValueError:
        return None


def _day_failed(done: list[Observation]) -> bool:
    """The day's flights failed for good, or none can be booked (:func:`.degraded.day_failed`:
    not a mistake of the model's, not a bad date, not a route with no direct flights)."""
    ok = [o for o in done if o.ok and o.data]
    return bool(done) and day_failed(ok[-1] if ok else done[-1])


def _of(obs: list[Observation], name: str) -> list[Observation]:
    return [o for o in obs if o.name == name]


def _latest_ok(obs: list[Observation], spec: ToolSpec | None) -> dict[str, Any] | None:
    found = [o.data for o in obs if spec and o.name == spec.name and o.ok and o.data]
    return found[-1] if found else None


def _needed(done: list[Observation], confirm: bool, retry: bool) -> bool:
    """Call this tool (again)? Once, plus one retry for a retryable (unless ``retry`` is off:
    on_failure=report) or fixable failure; with stop=confirm, once more after the first success
    ("to confirm", 000 §3.1), unless the result's hint says there is no need (000 §5.1)."""
    if not done:
        return True
    if any(o.ok for o in done):
        hinted = _ENOUGH.search(str((done[-1].data or {}).get("hint", "")))
        return confirm and not hinted and done[-1].ok and len(done) == 1
    last = done[-1]
    return len(done) == 1 and ((retry and last.retryable) or last.kind in _FIXABLE)


def items_for(
    flight: dict[str, Any] | None, hotel: dict[str, Any] | None, req: TripRequest
) -> list[dict[str, Any]]:
    """calculate_cost's items. A hotel result for fewer nights than asked (a tool without a
    ``nights`` parameter, as in article 000) is priced at its nightly rate × the nights asked:
    the article's 520 × 2 = 1040."""
    items = []
    zh = req.language == "zh"
    if flight:
        label = f"机票 {flight['flight_no']}" if zh else f"flight {flight['flight_no']}"
        items.append({"label": label, "unit_price": flight["price"], "quantity": 1})
    if hotel:
        nights = max(int(hotel.get("nights") or 1), req.nights)
        per_night, total = hotel["price_per_night"], hotel["total_price"]
        if int(hotel.get("nights") or 1) < req.nights:
            total = per_night * nights
        label = f"酒店 {hotel['name']}" if zh else f"hotel {hotel['name_en']}"
        if per_night * nights == total:
            items.append({"label": label, "unit_price": per_night, "quantity": nights})
        else:
            items.append({"label": f"{label} ({nights})", "unit_price": total, "quantity": 1})
    return items
