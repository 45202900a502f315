"""The sections of TravelModel's answer: flights, weather, hotel, budget (article 000 §6), each
written from the phrase table (:mod:`.phrases`) in the answer's language, under the style the
knobs set and the outline settled before writing (:class:`.writer.Outline`)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .degraded import alternative_heads, budget_lead, fare_line, kept_line, offer_line
from .failures import reason_of
from .failures import when as _when
from .intent import TripRequest
from .observations import AIRLINES_EN, choose_flight, choose_hotel, dress_advice, money
from .summary import compare_weather
from .writer import Writer, failure, latest

__all__ = ["NOTES", "cost", "flights", "hotels", "unread_fare", "weather"]

#: A user who asks what to wear (the dress knob's default gives clothing advice only then).
_ASKS_DRESS = re.compile(r"穿|冷不冷|保暖|衣服|外套|\b(?:wear|dress|coat|clothes|clothing)\b", re.I)

#: A result's machine-readable ``reason`` -> (zh, en): never the tool's English ``note``.
NOTES = {
    "sold_out": ("当天航班均已售罄", "every flight that day is sold out"),
    "no_flights_that_day": ("当天没有航班", "no flights that day"),
    "no_direct_flights": (
        "两地之间没有直飞航班，可考虑高铁",
        "no direct flights; take the high-speed train",
    ),
    "no_weather_data": ("暂无天气数据", "no weather data"),
    "nothing_near": (
        "附近没有列出的酒店，以下为全城酒店",
        "no hotel listed nearby; showing the whole city",
    ),
    "no_rooms": ("这几晚没有空房", "no rooms for these nights"),
}


def _note(data: dict[str, Any], req: TripRequest) -> tuple[str, str]:
    zh, en = NOTES[data["reason"]]
    return (f"{req.near}{zh}" if data["reason"] == "nothing_near" and req.near else zh), en


def flights(w: Writer, req: TripRequest, obs: list[Any]) -> None:
    if "flights" not in req.wants:
        return
    if not req.origin or not req.destination:  # ask only for what is missing
        _ask_route(w, req)
        return
    if w.outline.moved:  # the asked day failed, another day has flights: offer it (000 §5.2)
        failure, later = w.outline.moved
        w.add(*offer_line(req, _reason(failure), later))
        _flight(w, later, alternative_heads(req, later)[0 if w.zh else 1])
        w.add(*kept_line(req, later))
        return
    bookable = [o for o in obs if o.ok and o.data and choose_flight(o.data)[0]]
    data = latest(w, req, bookable or obs, "flights", "航班", "Flights")
    if data is not None:
        _flight(w, data, w.phrase("flight_head"))


def unread_fare(req: TripRequest, obs: list[Any]) -> bool:
    """Were the flights looked up and came back as prose, with no usable result? (The budget
    then says the fare is left out.)"""
    usable = [o for o in obs if o.ok and o.data]
    return (
        bool(req.origin and req.destination and obs and not usable) and obs[-1].kind == "not_data"
    )


def _ask_route(w: Writer, req: TripRequest) -> None:
    if req.destination:
        w.put("ask_origin", to=w.city(req.destination))
    elif req.origin:
        w.put("ask_destination", since=w.city(req.origin))
    else:
        w.put("ask_route")


def _flight(w: Writer, data: dict[str, Any], head: str) -> None:
    best, cheapest = choose_flight(data, w.style.flight_how, w.style.flight_room)
    when = _when(data, w.zh)
    if best is None:
        note = w.t(*NOTES.get(data.get("reason", ""), NOTES["sold_out"]))
        w.put("no_flight", origin=w.city(data["departure"]),
              destination=w.city(data["destination"]), when=when, note=note)  # fmt: skip
        return
    assert cheapest is not None
    code = not w.zh  # English names the airports by code, Chinese by name
    w.put("flight", head=head, no=best["flight_no"], when=when,
          airline=best["airline"] if w.zh else AIRLINES_EN.get(best["airline"], best["airline"]),
          dep_time=best["departure_time"], arr_time=best["arrival_time"],
          dep=best.get("departure_airport_code", "") if code else best["departure_airport"],
          arr=best.get("arrival_airport_code", "") if code else best["arrival_airport"],
          price=best["price"], seats=best["seats_left"])  # fmt: skip
    count = len(data["flights"])
    if cheapest is best:
        w.put("also_cheapest", count=count)
    else:
        w.put("cheapest_is", count=count, no=cheapest["flight_no"],
              time=cheapest["departure_time"], price=cheapest["price"])  # fmt: skip


def _reason(failure: Any) -> tuple[str, str]:
    """Why the asked day has no flights: the tool's failure, or the result's reason."""
    if failure.ok:
        return NOTES.get((failure.data or {}).get("reason", ""), NOTES["sold_out"])
    return reason_of(failure)


def _landmark_en(w: Writer, hotel: dict[str, Any]) -> str:
    """The hotel's landmark in English, from the dataset (the tool result has it in Chinese)."""
    rows = w.data.hotels[w.data.hotels["name"] == hotel["name"]]
    return str(rows["landmark_en"].iloc[0]) if len(rows) and rows["landmark_en"].iloc[0] else ""


def weather(w: Writer, req: TripRequest, obs: list[Any]) -> None:
    if "weather" in req.wants and not req.destination and not (req.compare or req.each):
        w.put("ask_weather_city")
        return
    if req.compare or req.each:  # each city named; compared when the user asked which
        found = [o.data for o in obs if o.ok and o.data and o.data.get("condition")]
        for d in found:
            _weather_line(w, d, req)
        if len(found) < len(obs):
            failure(w, "天气", "Weather", [o for o in obs if not o.ok] or obs)
        if not req.compare:
            return
        w.add(
            *[compare_weather(replace(req, language=lang), found, w.city) for lang in ("zh", "en")]
        )
        return
    days = [o for o in obs if o.ok and o.data] if len(req.dates) > 1 else []
    if len(days) > 1:
        for o in days:
            _weather_line(w, o.data, req)
        return
    d = latest(w, req, obs, "weather", "天气", "Weather")
    if d is not None:
        _weather_line(w, d, req)


def _weather_line(w: Writer, d: dict[str, Any], req: TripRequest) -> None:
    city = d["city"] if w.zh else w.city(d["city"])
    if not d.get("condition"):
        w.put("no_weather", city=city, when=_when(d, w.zh))
        return
    advice = []
    if w.style.dress == "always" or _ASKS_DRESS.search(req.text):  # the dress knob (001 §5.2)
        advice.append(dress_advice(d["temp_min_c"], d["temp_max_c"])[0 if w.zh else 1])
        if d["temp_min_c"] <= 0:
            advice.append(w.phrase("freezing"))
    if d["precip_prob"] >= 0.5:
        advice.append(w.phrase("umbrella"))
    first, rest = w.phrase("advice_join").split("|")
    w.put("weather", city=city, when=_when(d, w.zh), low=d["temp_min_c"], high=d["temp_max_c"],
          condition=d["condition"] if w.zh else d["condition_en"], rain=d["precip_prob"],
          advice=first + rest.join(advice) if advice else "")  # fmt: skip


def hotels(w: Writer, req: TripRequest, obs: list[Any]) -> None:
    if "hotels" in req.wants and not req.destination:
        w.put("ask_hotel_city")
        return
    data = latest(w, req, obs, "hotels", "酒店", "Hotel")
    if data is None:
        return
    best, _cheap = choose_hotel(data, req, w.style.hotel_how, w.style.hotel_room)
    city = data["city"] if w.zh else w.city(data["city"])
    if best is None:
        note = w.t(*NOTES.get(data.get("reason", ""), NOTES["no_rooms"]))
        w.put("no_hotel", city=city, when=_when(data, w.zh), note=note)
        return
    nights, per_night, total = best["nights"], best["price_per_night"], best["total_price"]
    estimate = ""
    if nights < req.nights:  # a tool without `nights` (article 000): the first night's rate
        nights, total = req.nights, per_night * req.nights
        estimate = w.phrase("first_night_rate")
    elif best.get("nightly_prices") and len(set(best["nightly_prices"])) > 1:
        estimate = w.phrase("night_by_night", each=" + ".join(map(str, best["nightly_prices"])))
    elif not req.nights_stated:
        estimate = w.phrase("one_night")
    landmark = best["landmark"] if w.zh else req.near
    near = w.phrase("hotel_near", landmark=landmark, km=best["distance_km"]) if req.near else ""
    # the flights offered are for another day: say which night this is
    day = w.phrase("hotel_day", when=_when(data, w.zh)) if w.moved else ""
    w.put("hotel", day=day, name=best["name"] if w.zh else best["name_en"],
          district=best["district"], landmark=best["landmark"] if w.zh else _landmark_en(w, best),
          rating=best["rating"], near=near, per_night=per_night, nights=nights, total=total,
          estimate=estimate)  # fmt: skip
    others = [h for h in data["hotels"] if h["name"] != best["name"]][:2]
    if others:
        priced = [w.phrase("hotel_price", name=h["name"] if w.zh else h["name_en"],
                           price=h["price_per_night"]) for h in others]  # fmt: skip
        w.put("also_available", hotels=w.phrase("list_join").join(priced))
    if data.get("reason") in NOTES:
        w.put("note", note=_note(data, req)[0 if w.zh else 1])


def cost(w: Writer, req: TripRequest, obs: list[Any]) -> None:
    if "cost" not in req.wants:
        return
    lead = ""
    if w.moved:
        lead = budget_lead(req)[0 if w.zh else 1]
    elif w.outline.no_fare:
        lead = w.phrase("unread_fare")
    _cost(w, obs, lead)
    if w.moved:  # the other day's fare, apart: never added to the asked day's hotel
        w.add(*fare_line(req, w.moved))


def _cost(w: Writer, obs: list[Any], lead: str) -> None:
    ok = [o for o in obs if o.ok and o.data]
    if not ok:
        if obs:
            failure(w, "预算", "Budget", obs)
        else:  # never calculated; on the wrap-up call after max_iterations, say why
            w.put(
                "no_total", why=w.phrase("no_total_stopped" if w.style.stopped else "no_total_yet")
            )
        return
    first = ok[0].data
    parts = " + ".join(f"{money(i['subtotal'])}" for i in first["items"])
    total, budget = money(first["total"]), first.get("budget")
    if budget is None:
        w.put("cost_total", lead=lead, parts=parts, total=total)
        return
    left = first["remaining"]
    if first["within_budget"]:
        w.put("within_budget", lead=lead, parts=parts, total=total, budget=money(budget),
              left=money(left))  # fmt: skip
        return
    w.put("over_budget", lead=lead, parts=parts, total=total, budget=money(budget),
          over=money(-left))  # fmt: skip
    if len(ok) < 2:
        if w.style.alternatives:
            w.put("no_cheaper")
        return
    alt = ok[1].data
    labels = w.phrase("labels_join").join(i["label"] for i in alt["items"])
    if alt["within_budget"]:
        w.put("alternative_fits", labels=labels, total=money(alt["total"]),
              left=money(alt["remaining"]))  # fmt: skip
    else:
        w.put("alternative_over", labels=labels, total=money(alt["total"]),
              over=money(-alt["remaining"]))  # fmt: skip
