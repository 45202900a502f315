"""The calls that act: booking the chosen hotel and sending the itinerary, when offered and asked.

Offered means a tool whose name or description says so (book/reserve/预订, send/e-mail/发送);
asked means the user's words: 订/预订/book/reserve for the booking, an e-mail address for the
itinerary. They come after the lookups and the cost, once each. misbehave='gullible' may book
another hotel, or send to another address too, when a tool result told it to
(:mod:`.gullible`).
"""

from __future__ import annotations

import re
from typing import Any

from .observations import Observation, picks
from .reading import Turn

__all__ = ["EMAIL", "act", "user_text"]

_BOOK = re.compile(r"book|reserve|预订|预定", re.I)
_SEND = re.compile(r"\bsend|e-?mail|发送|邮箱", re.I)
_ASKS_BOOK = re.compile(r"订|\bbook\b|\breserve\b", re.I)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
Step = tuple[str, dict[str, Any] | str]


def _tool(
    tools: list[dict[str, Any]], pattern: re.Pattern[str], skip: set[str]
) -> tuple[str, list[str]] | None:
    for t in tools:
        fn = t.get("function") or {}
        name = str(fn.get("name") or "")
        if name in skip or not (
            pattern.search(name) or pattern.search(str(fn.get("description") or "")[:60])
        ):
            continue
        params = list((fn.get("parameters") or {}).get("properties") or {})
        return name, params
    return None


def _param(params: list[str], *words: str) -> str | None:
    return next((p for p in params if any(w in p.lower() for w in words)), None)


def act(turn: Turn, tools: list[dict[str, Any]], user_text: str) -> list[Step]:
    """The next acting call, if any (see the module)."""
    obs = turn.observations
    done = {o.name for o in obs}
    searched = {spec.name for spec in turn.menu.specs.values()}
    hotels_spec = turn.menu.get("hotels")
    hotel_obs = [o for o in obs if hotels_spec and o.name == hotels_spec.name and o.ok and o.data]
    book = _tool(tools, _BOOK, searched)
    if book and book[0] not in done and hotel_obs and _ASKS_BOOK.search(user_text):
        name, params = book
        hotel = turn.injected.get("hotel") or _chosen(turn, obs, hotel_obs[-1])
        searched_args = hotel_obs[-1].arguments or {}
        day = next((v for k, v in searched_args.items() if "date" in k or "check" in k), None)
        args: dict[str, Any] = {}
        for key, value in (
            (_param(params, "hotel", "name"), hotel),
            (_param(params, "city"), turn.request.destination),
            (_param(params, "date", "check"), day or turn.request.date),
            (_param(params, "night"), turn.request.nights),
        ):
            if key and value is not None:
                args[key] = value
        if hotel:
            return [(name, args)]
    send = _tool(tools, _SEND, searched | ({book[0]} if book else set()))
    if not send or not hotel_obs:
        return []
    name, params = send
    sent = {
        str((o.arguments or {}).get(_param(params, "to", "email", "recipient") or "", ""))
        for o in obs
        if o.name == name
    }
    wanted = [m.group(0) for m in EMAIL.finditer(user_text)]
    if turn.injected.get("send"):
        wanted.append(str(turn.injected["send"]))
    for address in wanted:
        if address in sent:
            continue
        to, body = (
            _param(params, "to", "email", "recipient"),
            _param(params, "itinerary", "text", "body", "content"),
        )
        args = {k: v for k, v in ((to, address), (body, _itinerary(turn, obs))) if k}
        return [(name, args)]
    return []


def _chosen(turn: Turn, obs: list[Observation], hotels: Observation) -> str | None:
    flights_spec = turn.menu.get("flights")
    flights = [o.data for o in obs if flights_spec and o.name == flights_spec.name and o.ok]
    _, _, hotel, _ = picks(
        turn.request,
        flights[-1] if flights else None,
        hotels.data,
        turn.flight_choice,
        turn.hotel_choice,
    )
    return None if hotel is None else str(hotel.get("name"))


def _itinerary(turn: Turn, obs: list[Observation]) -> str:
    """What was found, in one line of the user's language: flight, hotel, total."""
    bits = []
    for o in obs:
        data = o.data or {}
        if o.ok and data.get("flights"):
            f = data["flights"][0]
            bits.append(f"{f.get('flight_no')} {data.get('date', '')} {f.get('departure_time')}")
        if o.ok and "booked" in data:
            bits.append(str(data.get("hotel")))
        if o.ok and "total" in data:
            bits.append(
                ("合计 {} 元" if turn.request.language == "zh" else "total {} CNY").format(
                    data["total"]
                )
            )
    return "; ".join(bits)


def user_text(request: Any) -> str:
    """The user's last message (not the runtime's corrections, not a memory)."""
    for m in reversed(request.messages):
        if m.get("role") == "user" and m.get("name") is None:
            content = m.get("content")
            return content if isinstance(content, str) else ""
    return ""
