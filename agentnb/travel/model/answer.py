"""write: TravelModel's final answer (Chinese or English) from this turn's tool results.

With output rules in its instructions (the ``sections`` knob) the answer lists each section
they name in full: flight number, times, fare, weather, hotel and a budget verdict (article
000 §6); without them, one summary sentence. The knobs shape the rest: what to leave out, the
form (lines, list, table, prose), the budget (an alternative, just the verdict, or stop), and a
word on booking. It says plainly what is missing or failed, in the user's language, instead of
inventing it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..data import TravelData
from .degraded import moved
from .intent import TripRequest
from .observations import Observation, fabricated_answer, money, rooms
from .phrases import say
from .sections import cost, flights, hotels, unread_fare, weather
from .shapes import leaves
from .summary import SECTIONS, Style, missing_tools, no_tools, summary_line
from .writer import Outline, Writer

__all__ = ["Observation", "Style", "compose_answer"]

#: The user wants to book: 订, 预订, book, booking, reserve (words, so "notebook" is not one).
_BOOK = re.compile(r"订|预定|\bbook|\breserv", re.I)


def compose_answer(
    req: TripRequest,
    observations: list[Any],
    data: TravelData,
    *,
    invent: bool = False,
    style: Style | None = None,
) -> str:
    """The final answer from the request, this turn's tool results and the cues' style."""
    if invent:
        return fabricated_answer(req)
    style = style or Style()
    w = Writer(req, data, style)
    unknown = list(dict.fromkeys(o.city for o in observations if o.kind == "unknown_city"))
    if unknown:
        if w.zh:
            known, names = "、".join(data.city_names), "、".join(f"「{c}」" for c in unknown)
        else:
            known, names = ", ".join(c.name_en for c in data.city_list), ", ".join(unknown)
        w.put("unknown_city", names=names, known=known)
        w.put("which_city")
        return "\n".join(w.lines)
    if style.no_tools and not observations and req.wants:
        return no_tools(req)
    by: dict[str, list[Any]] = {}
    for o in observations:
        by.setdefault(o.name, []).append(o)
    if not req.wants:
        if req.origin and not req.destination:
            w.put("noted_origin", origin=req.origin)
        else:
            w.put("who_am_i")
        return "\n".join(w.lines)
    roles: dict[str, list[Any]] = {}
    for name, obs in by.items():
        roles.setdefault(style.roles.get(name) or _role(name, obs), []).extend(obs)
    _rooms(style, req, roles)
    if style.budget_stop and _over(roles.get("cost", [])):  # the verdict only, then ask
        cost(w, req, roles["cost"])
        w.put("budget_stop")
        return _shaped(w.lines, style, w.zh)
    wanted = [s for s in SECTIONS if s in req.wants and s not in (*style.missing, *style.skipped)]
    wanted = [s for s in wanted if s not in style.leave_out]
    brief = [
        s
        for s in wanted
        if s not in style.detailed and not (s == "weather" and (req.compare or req.each))
    ]
    flights_obs = roles.get("flights", [])
    found = moved(flights_obs) if "flights" in wanted and req.origin and req.destination else None
    if "flights" in brief and found:  # another day's flights (000 §5.2)
        brief = [s for s in brief if s not in ("flights", "cost")]  # offered apart, not summed up
    no_fare = not found and "flights" in wanted and "flights" not in brief
    w = Writer(req, data, style, Outline(found, no_fare and unread_fare(req, flights_obs)))
    writers = {"flights": flights, "weather": weather, "hotels": hotels, "cost": cost}
    for section in wanted:
        if section not in brief:
            writers[section](w, req, roles.get(section, []))
    if brief:  # one sentence for what the output rules do not ask for; then what failed
        latest = {s: _latest_data(roles.get(s, [])) for s in SECTIONS}
        w.add(*[summary_line(replace(req, language=lang), latest, brief, style)
                for lang in ("zh", "en")])  # fmt: skip
        for section in brief:  # nothing it could read: say why (a failure, prose, a shape)
            if not any(o.ok and o.data for o in roles.get(section, [])):
                writers[section](w, req, roles.get(section, []))
    booked = _booked(w, roles.pop("book", []))
    for name, obs in roles.items():  # results of tools it cannot place: said, not used
        if name not in SECTIONS:
            seen = leaves(obs[-1].raw if obs[-1].raw is not None else obs[-1].data)
            quoted = w.phrase("list_join").join(f"{k}={v}" for k, v in seen) or "—"
            w.put("unused_result", name=name, seen=quoted)
    for section in style.skipped:  # the instructions said not to look it up: said, not invented
        w.put("skipped", what=w.phrase("section_" + section))
    for slot, words in req.unread.items():  # the user's words it could not read: said
        w.put("unread_slot", what=w.phrase("slot_" + slot), words=words)
    if style.missing:
        w.add(*[missing_tools(replace(req, language=lang), style.missing) for lang in ("zh", "en")])
    can_book = "book" in style.roles.values()
    if booked is None and _BOOK.search(req.text) and (style.booking == "ask" or not can_book):
        if style.booking != "none":
            w.put("booking_ask" if style.booking == "ask" else "booking_direct")
    elif booked is None and can_book and _BOOK.search(req.text) and _over(roles.get("cost", [])):
        w.put("not_booked_over")
    w.lines = [line for line in w.lines if line]
    if not w.lines:
        w.put("found_nothing")
    if style.assumed:
        w.lines.insert(0, say("assumed_day", "zh" if w.zh else "en", day=style.assumed))
    return _shaped(w.lines, style, w.zh)


def _shaped(lines: list[str], style: Style, zh: bool) -> str:
    """The answer's lines in the form the ``form`` knob asks for."""
    lines = [line for line in lines if line]
    if style.form == "list":
        return "\n".join(f"- {line}" for line in lines)
    if style.form == "prose":
        return ("" if zh else " ").join(lines)
    if style.form == "table":
        rows = [re.split(r"[：:]\s*", line, maxsplit=1) for line in lines]
        cells = [f"| {r[0]} | {r[1]} |" if len(r) == 2 else f"|  | {r[0]} |" for r in rows]
        return "\n".join([say("table_head", "zh" if zh else "en"), *cells])
    return "\n".join(lines)


def _booked(w: Writer, obs: list[Any]) -> bool | None:
    """The booking line (rule book): True when booked, False when the booking failed, None
    when nothing was booked this turn."""
    ok = [o for o in obs if o.ok and o.data]
    if ok:
        b = ok[-1].data
        w.put("booked", hotel=b["hotel"], day=b["check_in"], nights=b["nights"],
              total=money(b["total_price"]), id=b["booking_id"])  # fmt: skip
        return True
    if obs and obs[-1].kind == "foreign":  # it came back in a shape it does not know: quoted
        seen = w.phrase("list_join").join(f"{k}={v}" for k, v in leaves(obs[-1].raw)) or "—"
        w.put("booking_unread", name=obs[-1].name, seen=seen)
        return False
    if obs:
        w.put("not_booked", why=str(obs[-1].error or obs[-1].kind)[:120])
        return False
    return None


def _over(obs: list[Any]) -> bool:
    ok = [o for o in obs if o.ok and o.data]
    return bool(ok) and ok[0].data.get("within_budget") is False


def _rooms(style: Style, req: TripRequest, roles: dict[str, list[Any]]) -> None:
    """What a within_budget choice may spend: the budget less the other part of the trip."""
    flights, hotels = (_latest_data(roles.get(s, [])) for s in ("flights", "hotels"))
    style.flight_room, style.hotel_room = rooms(req, flights, hotels, style.flight_how,
                                                style.hotel_how)  # fmt: skip


def _role(name: str, obs: list[Any]) -> str:
    """A result's section when the request no longer lists its tool (the wrap-up call has no
    tools): by the tool's name, else by the shape of its result."""
    shaped = {str(o.shape) for o in obs if o.shape}
    if len(shaped) == 1:
        return shaped.pop()
    for section, word in (("flights", "flight"), ("weather", "weather"),
                          ("hotels", "hotel"), ("cost", "cost")):  # fmt: skip
        if word in name.lower():
            return section
    keys = {k for o in obs for k in (o.data or {}) if o.ok}
    for section, key in (("flights", "flights"), ("weather", "temp_min_c"),
                         ("hotels", "hotels"), ("cost", "total")):  # fmt: skip
        if key in keys:
            return section
    return name


def _latest_data(obs: list[Any]) -> dict[str, Any] | None:
    ok = [o.data for o in obs if o.ok and o.data]
    return ok[0] if ok and "items" in ok[0] else ok[-1] if ok else None
