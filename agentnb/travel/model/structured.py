"""How TravelModel answers in a format it is asked for (structured output, 002 §5.3).

A request with an output spec (``request.output``: ``response_format`` ``json_schema``) gets
its final answer as a JSON object that matches the schema: each property filled from what the
turn found out (the trip, the chosen flight and hotel, the cost), by its name or a common
alias, and coerced to its type; what is not known is null where the schema allows it, else
the type's empty value. ``response_format`` ``json_object`` (JSON mode: JSON, no schema)
gets the itinerary in its own shape (:class:`agentnb.travel.Itinerary`).

``misbehave="format_drift"`` drifts the format on purpose: the date in the user's calendar
format and the total as text ("1400 元") — valid JSON that no longer fits the schema, the
article's "今天能解析，明天解析失败". After the runtime's correction (an ``agentnb`` user
message saying the answer was not valid) it answers in the format asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...messages import RUNTIME_NAME
from ...models.base import ModelRequest
from ..itinerary import Itinerary
from .observations import picks, stay_total
from .reading import CORRECTION, Turn, text_of
from .slips import MISBEHAVIOURS

__all__ = ["asks_json", "corrected", "formatted", "structured_answer"]

#: Names a schema may use for what the stand-in knows.
ALIASES = {
    "from": "origin", "from_city": "origin", "departure": "origin", "departure_city": "origin",
    "to": "destination", "to_city": "destination", "city": "destination",
    "day": "date", "travel_date": "date", "flight_number": "flight_no", "number": "flight_no",
    "total_cost": "total", "cost": "total", "total_price": "total", "hotel_name": "name",
    "fare": "price", "summary": "answer", "text": "answer",
}  # fmt: skip


def formatted(
    request: ModelRequest,
    turn: Turn,
    answer: str | None,
    misbehave: str | None,
    say: Callable[..., Any],
) -> Any:
    """The final answer in the format the request asks for (as it is when it asks none);
    a drift on purpose is said in the reasoning (``say``: ``Reasoning.add``)."""
    if answer is None or not asks_json(request):
        return answer
    drift = misbehave == "format_drift" and not corrected(request)
    if drift:
        say("misbehave_format_drift", "r_misbehave", mode="format_drift",
            what=MISBEHAVIOURS["format_drift"])  # fmt: skip
    return structured_answer(request, turn, answer, drift=drift)


def asks_json(request: ModelRequest) -> bool:
    """A final answer in a format: an output spec, or JSON mode."""
    fmt = request.params.get("response_format")
    return request.output is not None or (isinstance(fmt, dict) and fmt.get("type") ==
                                          "json_object")  # fmt: skip


def corrected(request: ModelRequest) -> bool:
    """The runtime told the model since the user's last words that its answer was not valid
    (by name, or — the Responses and Anthropic APIs carry no message names — by its words,
    ``agentnb.runtime.decide.output_correction``'s)."""
    for message in reversed(request.messages):
        if message.get("role") != "user":
            continue
        if not message.get("name") and text_of(message).startswith(CORRECTION):
            return True
        if message.get("name") != RUNTIME_NAME:
            return False
        if "not valid" in text_of(message):
            return True
    return False


def facts(turn: Turn, answer: str) -> dict[str, Any]:
    """What the turn found out, as the itinerary's fields."""
    req = turn.request
    found: dict[str, Any] = {}
    for o in turn.observations:
        if o.ok and o.data:
            for key in ("flights", "hotels", "total"):
                if key in o.data:
                    found[key] = o.data
    flights, hotels = found.get("flights"), found.get("hotels")
    flight, _, hotel, _ = picks(req, flights, hotels, turn.flight_choice, turn.hotel_choice)
    cost = found.get("total")
    days = [o.data.get("date") or o.data.get("check_in") for o in turn.observations
            if o.ok and o.data and (o.data.get("date") or o.data.get("check_in"))]  # fmt: skip
    day = days[0] if days else req.date or ""
    total = (
        cost["total"]
        if cost
        else (flight["price"] if flight else 0) + (stay_total(hotel, req) if hotel else 0)
    )
    return {
        "origin": req.origin or "", "destination": req.destination or "", "date": day,
        "flight": flight and {k: flight[k] for k in
                              ("flight_no", "airline", "departure_time", "arrival_time", "price")},
        "hotel": hotel and {"name": hotel["name"], "price_per_night": hotel["price_per_night"],
                            "nights": req.nights},
        "total": total, "within_budget": cost.get("within_budget") if cost else None,
        "currency": "CNY", "budget": req.budget, "answer": answer,
    }  # fmt: skip


def structured_answer(request: ModelRequest, turn: Turn, answer: str, *, drift: bool) -> str:
    """The final answer as JSON in the format the request asks for (see the module)."""
    known = facts(turn, answer)
    spec = request.output
    schema = spec.schema if spec is not None else Itinerary.model_json_schema()
    value = _fill(schema, known, schema.get("$defs") or schema.get("definitions") or {})
    if drift and isinstance(value, dict):
        if "date" in value and turn.request.date:
            value["date"] = turn.request.date  # the user's words (周五), not YYYY-MM-DD
        if "total" in value:
            value["total"] = f"{value['total']:g} 元" if isinstance(value["total"], int | float) \
                else f"{value['total']} 元"  # fmt: skip
    return json.dumps(value, ensure_ascii=False)


def _fill(schema: Any, known: Any, defs: dict[str, Any]) -> Any:
    if not isinstance(schema, dict):
        return known
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _fill(defs.get(ref.rsplit("/", 1)[-1], {}), known, defs)
    options = [s for s in schema.get("anyOf") or () if isinstance(s, dict)]
    if options:
        real = [s for s in options if s.get("type") != "null"]
        if known is None and len(real) < len(options):
            return None
        return _fill(real[0] if real else options[0], known, defs)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if known is None and "null" in kinds:
        return None
    kind = next((k for k in kinds if k != "null"), None)
    if kind == "object" or "properties" in schema:
        source = known if isinstance(known, dict) else {}
        return {name: _fill(sub, _lookup(source, name), defs)
                for name, sub in (schema.get("properties") or {}).items()}  # fmt: skip
    if "enum" in schema:
        return known if known in schema["enum"] else schema["enum"][0]
    return _coerce(kind, known, schema)


def _lookup(source: dict[str, Any], name: str) -> Any:
    for key in (name, ALIASES.get(name)):
        if key is not None and key in source:
            return source[key]
    for nested in ("flight", "hotel"):  # a flat schema: the flight's number at the top
        inner = source.get(nested)
        if isinstance(inner, dict) and name in inner:
            return inner[name]
    return None


def _coerce(kind: Any, known: Any, schema: dict[str, Any]) -> Any:
    if kind == "array":
        items = known if isinstance(known, list) else []
        return [_coerce((schema.get("items") or {}).get("type"), v, {}) for v in items]
    if kind == "integer":
        return int(known) if isinstance(known, int | float) and not isinstance(known, bool) else 0
    if kind == "number":
        return float(known) if isinstance(known, int | float) and not isinstance(known, bool) \
            else 0.0  # fmt: skip
    if kind == "boolean":
        return bool(known)
    if kind == "string":
        return "" if known is None else str(known)
    return known
