"""The result shapes TravelModel can read: one per role (flights, weather, hotels, cost, book).

A stand-in exposed to any app (``an.observe.serve(TravelModel())``) meets tool results of every
shape. It reads a result as a role's data only when the result has that role's shape (checked
with pydantic, field by field); any other result is *foreign*: it came back, but the stand-in
does not know what its fields mean, so it reads what it can (the plain values it sees, which
the answer quotes) and says it could not use it — never a crash, never a guess (issue 30).
"""

from __future__ import annotations

from typing import (
    Any,
    NotRequired,  # pydantic reads these on Python 3.11
)

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

__all__ = ["SHAPES", "fits", "leaves", "shape_of"]

_LAX = ConfigDict(extra="allow")


@with_config(_LAX)
class _Flight(TypedDict):
    flight_no: str
    airline: str
    departure_airport: str
    arrival_airport: str
    departure_time: str
    arrival_time: str
    price: float
    seats_left: int


@with_config(_LAX)
class _Flights(TypedDict):
    departure: str
    destination: str
    flights: list[_Flight]


@with_config(_LAX)
class _Weather(TypedDict):
    city: str
    condition: str
    condition_en: str
    temp_min_c: float
    temp_max_c: float
    precip_prob: float


@with_config(_LAX)
class _NoWeather(TypedDict):
    city: str
    weather: None
    reason: str


@with_config(_LAX)
class _Hotel(TypedDict):
    name: str
    name_en: str
    district: str
    landmark: str
    distance_km: float
    rating: float
    price_per_night: float
    total_price: float
    nightly_prices: NotRequired[list[float]]


@with_config(_LAX)
class _Hotels(TypedDict):
    city: str
    hotels: list[_Hotel]
    nights: NotRequired[int]


@with_config(_LAX)
class _Item(TypedDict):
    label: str
    subtotal: float


@with_config(_LAX)
class _Cost(TypedDict):
    items: list[_Item]
    total: float


@with_config(_LAX)
class _Verdict(_Cost):
    budget: float
    within_budget: bool
    remaining: float


@with_config(_LAX)
class _Booking(TypedDict):
    booking_id: str
    hotel: str
    check_in: str
    nights: int
    total_price: float


#: role -> the shapes its results may take (the travel tools' own).
SHAPES: dict[str, TypeAdapter[Any]] = {
    "flights": TypeAdapter(_Flights),
    "weather": TypeAdapter(_Weather | _NoWeather),
    "hotels": TypeAdapter(_Hotels),
    "cost": TypeAdapter(_Verdict | _Cost),
    "book": TypeAdapter(_Booking),
}


def fits(role: str, data: Any) -> bool:
    """Has ``data`` the shape of a ``role`` result? (A cost result that names a budget must
    also give the verdict.)"""
    adapter = SHAPES.get(role)
    if adapter is None or not isinstance(data, dict):
        return False
    if role == "cost" and data.get("budget") is not None:
        adapter = TypeAdapter(_Verdict)
    try:
        adapter.validate_python(data, strict=True)
    except ValidationError:
        return False
    return True


def shape_of(data: Any, role: str | None = None) -> str:
    """The role whose shape ``data`` has: ``role``'s when given (else ""), or the first that
    fits when the tool's role is unknown."""
    if role is not None:
        return role if fits(role, data) else ""
    return next((r for r in SHAPES if fits(r, data)), "")


def leaves(data: Any, limit: int = 6) -> list[tuple[str, str]]:
    """The plain values of a foreign result, as (path, value), breadth first, at most
    ``limit``: what the stand-in can quote of a result it cannot interpret."""
    out: list[tuple[str, str]] = []
    queue: list[tuple[str, Any]] = [("", data)]
    while queue and len(out) < limit:
        path, value = queue.pop(0)
        if isinstance(value, dict):
            queue += [(f"{path}.{k}" if path else str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            queue += [(f"{path}[{i}]", v) for i, v in enumerate(value[:limit])]
        elif value is not None and not isinstance(value, bool) and str(value).strip():
            text = " ".join(str(value).split())
            out.append((path or "value", text if len(text) <= 40 else text[:39] + "…"))
    return out
