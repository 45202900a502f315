"""How TravelModel reads the tool results of a turn: observations, choices, small helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .intent import TripRequest
from .shapes import shape_of

__all__ = [
    "AIRLINES_EN",
    "Observation",
    "choose_flight",
    "choose_hotel",
    "dress_advice",
    "fabricated_answer",
    "money",
    "picks",
    "reports_error",
    "rooms",
    "stay_total",
]


@dataclass
class Observation:
    """One tool result of the current turn, as the model understands it.

    ``kind`` is empty for a result it can read, the runtime's error kind (or the tool's
    ``code``) for a failure (``{"ok": false, ...}``, or a tool's own ``{"error": ...}`` with none
    of its role's data: :func:`reports_error`), ``not_data`` for prose, and ``foreign`` for data
    whose shape is not its role's (:mod:`.shapes`): then ``data`` is None and ``raw`` keeps what
    came back."""

    name: str
    arguments: dict[str, Any] | None
    ok: bool
    data: dict[str, Any] | None
    error: str = ""
    kind: str = ""
    retryable: bool = False
    city: str = ""  # the unknown city, for unknown_city errors
    shape: str = ""  # the role whose result shape ``data`` has (flights, weather, hotels, cost)
    raw: Any = None  # a foreign result, as it came back (parsed)

    @classmethod
    def read(cls, name: str, raw_arguments: Any, content: str,
             role: str | None = None) -> Observation:  # fmt: skip
        """Read a result of tool ``name``; ``role`` is the tool's role when the request's tool
        schemas tell it (its result must have that role's shape), else any shape will do."""
        try:
            args = json.loads(raw_arguments) if raw_arguments else {}
        except (TypeError, ValueError):
            args = raw_arguments if isinstance(raw_arguments, dict) else None
        if not isinstance(args, dict):
            args = None
        try:
            data = json.loads(content)
        except ValueError:
            data = None
        if not isinstance(data, dict):  # it came back (ok), but as prose: nothing to read
            return cls(name, args, True, None, kind="not_data", raw=data)
        if data.get("ok") is not False:
            shape = shape_of(data, role)
            if shape:
                return cls(name, args, True, data, shape=shape)
            if not reports_error(data):  # data in a shape it does not know: quoted, never used
                return cls(name, args, True, None, kind="foreign", raw=data)
        error = str(data.get("error", ""))
        # The runtime's kinds (agentnb.ERROR_KINDS); a ToolError from our tools is refined by
        # its own `code` field, never by reading the English text.
        kind = str(data.get("code") or data.get("kind") or "failed")
        retryable = bool(data.get("retryable")) or kind == "timeout"
        city = str(data.get("city") or "") if kind == "unknown_city" else ""
        return cls(name, args, False, data, error, kind, retryable, city)


def reports_error(data: dict[str, Any]) -> bool:
    """Is this a failure in article 000 §5.2's fixed structure (``{"error": "上游服务超时",
    "fallback": []}``): a top-level ``error`` text and none of the role's data?"""
    error = data.get("error")
    return isinstance(error, str) and bool(error.strip())


def choose_flight(
    result: dict[str, Any] | None, how: str = "earliest", room: float | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(recommended, cheapest) among the flights with seats: the earliest by default, or the
    latest, the cheapest, or (``within_budget``) the earliest whose fare fits ``room``."""
    flights = [f for f in (result or {}).get("flights", []) if f.get("seats_left", 0) > 0]
    if not flights:
        return None, None
    cheapest = min(flights, key=lambda f: f["price"])
    if how == "cheapest":
        return cheapest, cheapest
    if how == "latest":
        return max(flights, key=lambda f: f["departure_time"]), cheapest
    if how == "within_budget" and room is not None:
        fits = [f for f in flights if f["price"] <= room]
        flights = fits or [cheapest]
    return min(flights, key=lambda f: f["departure_time"]), cheapest


def stay_total(hotel: dict[str, Any], req: TripRequest) -> float:
    """A hotel's price for the nights asked (a tool without ``nights``: the first night's rate
    × nights, as article 000's table)."""
    if int(hotel.get("nights") or 1) < req.nights:
        return float(hotel["price_per_night"] * req.nights)
    return float(hotel["total_price"])


def choose_hotel(
    result: dict[str, Any] | None, req: TripRequest, how: str = "value", room: float | None = None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(recommended, cheapest). ``value`` (the default): near a landmark the closest, else the
    best rated among the cheaper half of the list; or the cheapest, the best rated, the
    nearest, or (``within_budget``) the best rated whose stay fits ``room``."""
    hotels = list((result or {}).get("hotels", []))
    if not hotels:
        return None, None
    nights = (result or {}).get("nights", req.nights)
    hotels = [{**h, "nights": nights} for h in hotels]
    cheapest = min(hotels, key=lambda h: h["price_per_night"])
    rated = lambda h: (h["rating"], -h["price_per_night"])  # noqa: E731
    if how == "cheapest":
        return cheapest, cheapest
    if how == "best_rated":
        return max(hotels, key=rated), cheapest
    if how == "within_budget" and room is not None:
        fits = [h for h in hotels if stay_total(h, req) <= room]
        return (max(fits, key=rated) if fits else cheapest), cheapest
    if how == "nearest" or (req.near and not (result or {}).get("note")):
        return min(hotels, key=lambda h: h["distance_km"]), cheapest
    prices = sorted(h["price_per_night"] for h in hotels)
    median = prices[(len(prices) - 1) // 2]
    pool = [h for h in hotels if h["price_per_night"] <= median]
    return max(pool, key=rated), cheapest


Pick = dict[str, Any] | None


def picks(req: TripRequest, flights: Pick, hotels: Pick, flight_how: str,
          hotel_how: str) -> tuple[Pick, Pick, Pick, Pick]:  # fmt: skip
    """(flight, cheapest flight, hotel, cheapest hotel) under the choice knobs; a budget choice
    leaves room for the cheapest hotel (flight) or for the chosen fare (hotel)."""
    budget = req.budget
    _, cheap_hotel = choose_hotel(hotels, req)
    room = None
    if flight_how == "within_budget" and budget is not None:
        room = budget - (stay_total(cheap_hotel, req) if cheap_hotel else 0)
    flight, cheap_flight = choose_flight(flights, flight_how, room)
    room = None
    if hotel_how == "within_budget" and budget is not None:
        room = budget - (flight["price"] if flight else 0)
    hotel, cheap_hotel = choose_hotel(hotels, req, hotel_how, room)
    return flight, cheap_flight, hotel, cheap_hotel


def rooms(req: TripRequest, flights: Pick, hotels: Pick, flight_how: str,
          hotel_how: str) -> tuple[float | None, float | None]:  # fmt: skip
    """What a within_budget choice may spend: (on the fare, on the stay); None without one."""
    if "within_budget" not in (flight_how, hotel_how) or req.budget is None:
        return None, None
    flight, _, _, cheap_hotel = picks(req, flights, hotels, flight_how, hotel_how)
    fare = req.budget - (stay_total(cheap_hotel, req) if cheap_hotel else 0)
    return fare, req.budget - (flight["price"] if flight else 0)


def money(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


AIRLINES_EN = {
    "中国东方航空": "China Eastern", "中国国际航空": "Air China", "中国南方航空": "China Southern",
    "海南航空": "Hainan Airlines", "厦门航空": "Xiamen Airlines", "四川航空": "Sichuan Airlines",
    "上海航空": "Shanghai Airlines", "深圳航空": "Shenzhen Airlines", "吉祥航空": "Juneyao Air",
    "春秋航空": "Spring Airlines",
}  # fmt: skip


def dress_advice(low: int, high: int) -> tuple[str, str]:
    """Clothing advice from the day's temperatures (article 001's 穿衣建议)."""
    if high <= 5:
        return "穿羽绒服、戴帽子手套", "wear a down coat, hat and gloves"
    if high <= 12:
        return "穿厚外套或毛衣", "wear a warm coat or a sweater"
    if high <= 20 or low <= 10:
        return "穿薄外套，早晚加一件", "wear a light jacket, with a layer for morning and evening"
    return "短袖即可，注意防晒", "short sleeves are fine; mind the sun"


def fabricated_answer(req: TripRequest) -> str:
    """What a model says when it answers from "memory": plausible, specific, and invented."""
    dest = req.destination or "目的地"
    if req.language == "zh":
        return (
            f"好的！推荐航班 CA1234，早上 07:30 起飞，票价约 650 元；{dest}当天晴，10～18°C；"
            f"推荐如家酒店，199 元/晚；合计约 849 元，在预算内。"
        )
    return (
        f"Sure! Take flight CA1234 at 07:30 for about 650 CNY; {dest} will be sunny, 10 to 18 °C; "
        "stay at Home Inn for 199 CNY a night; about 849 CNY in total, within budget."
    )
