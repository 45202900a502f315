"""The reasoning TravelModel writes with each reply (``reasoning_content``, the "inner
monologue" of article 001 §6.2), in the user's language.

Each line starts with the rule of ``TravelModel.rules()`` that produced it, in brackets, then
the facts it used: ``[today] 今天是 2025-01-06（周一），周五 → 2025-01-10（周五）``,
``[hotel_choice] 用户要便宜的 → 选 260 元的汉庭，而不是评分更高的全季``.
"""

from __future__ import annotations

from typing import Any

from ..dates import resolve_date
from .clarify import missing_slots, slot_name
from .observations import Observation, choose_hotel, money, picks, rooms
from .phrases import say
from .plan import Step, iso_date
from .reading import Turn
from .slips import MISBEHAVIOURS

__all__ = ["Reasoning", "explain_calls", "explain_question"]

_WEEKDAYS = {"zh": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
             "en": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]}  # fmt: skip
_SECTION = {"flights": ("航班", "flights"), "weather": ("天气", "weather"),
            "hotels": ("酒店", "hotel"), "cost": ("预算", "budget")}  # fmt: skip


class Reasoning:
    """The lines of one reply's reasoning: ``add(rule, phrase, **fields)``."""

    def __init__(self, language: str) -> None:
        self.language = language
        self.lines: list[str] = []

    def add(self, rule: str, key: str, **fields: Any) -> None:
        self.lines.append(f"[{rule}] {say(key, self.language, **fields)}")

    def slip(self, rule: str, temperature: float, **fields: Any) -> None:
        what = say(rule, self.language, **fields)
        self.add(rule, "r_slip", t=temperature, what=what)

    def text(self) -> str:
        return "\n".join(self.lines)

    def section(self, name: str) -> str:
        zh, en = _SECTION.get(name, (name, name))
        return zh if self.language == "zh" else en

    def sections(self, names: list[str]) -> str:
        return ("、" if self.language == "zh" else ", ").join(self.section(n) for n in names)

    # -- facts -------------------------------------------------------------------------
    def date(self, turn: Turn, word: str | None) -> None:
        """``[today] 今天是 2025-01-06（周一），周五 → 2025-01-10（周五）``."""
        if not word:
            return
        try:
            day = resolve_date(word, turn.today)
        except ValueError:
            return
        names = _WEEKDAYS[self.language]
        self.add("today", "r_today", today=turn.today.isoformat(),
                 today_wd=names[turn.today.weekday()], word=word, day=day.isoformat(),
                 wd=names[day.weekday()])  # fmt: skip

    def calls(self, turn: Turn, steps: list[Step], word: str | None) -> None:
        """Why these calls, and how each date was written."""
        done = {o.name for o in turn.observations if o.ok}
        need = [
            s for s in turn.request.wants if (spec := turn.menu.get(s)) and spec.name not in done
        ]
        names = ", ".join(dict.fromkeys(name for name, _ in steps))
        self.add("plan_calls", "r_calls", need=self.sections(need) or names, calls=names)
        for name, args in steps:
            spec = next((s for s in turn.menu.specs.values() if s.name == name), None)
            if spec is None or "date" not in spec.slots or not isinstance(args, dict):
                continue
            value = args.get(spec.slots["date"])
            if isinstance(value, str) and "/" in value:
                continue  # a slip of the date format, said on its own line
            knob = turn.policy.dates in ("iso", "relative")
            if iso_date(spec, turn.policy.dates):
                rule, key = ("dates", "r_iso_knob") if knob else ("date_format", "r_iso")
            else:
                rule, key = ("dates", "r_relative_knob") if knob else ("date_format", "r_relative")
            self.add(rule, key, tool=name, day=value, word=value)

    def choices(self, turn: Turn, obs: list[Observation]) -> None:
        """Which flight and hotel, and why not the other."""
        req = turn.request
        flights = _latest(obs, "flights", turn)
        hotels = _latest(obs, "hotels", turn)
        fhow, hhow = turn.flight_choice, turn.hotel_choice
        flight, cheap_f, hotel, cheap_h = picks(req, flights, hotels, fhow, hhow)
        fare_room, stay_room = (money(r) if r is not None else "" for r in
                                rooms(req, flights, hotels, fhow, hhow))  # fmt: skip
        why = say("why_user" if turn.policy.flight_choice == "cheapest_if_asked" else "why_rule",
                  self.language)  # fmt: skip
        if turn.policy.flight_choice == "cheapest_if_asked" and req.budget is not None:
            why = say("why_budget", self.language)
        if flight and cheap_f:
            earliest, _ = picks(req, flights, None, "earliest", "value")[:2]
            fields = {"flight": flight["flight_no"], "time": flight["departure_time"],
                      "price": flight["price"], "cheap": cheap_f["flight_no"],
                      "cheap_price": cheap_f["price"], "other": (earliest or flight)["flight_no"],
                      "room": fare_room}  # fmt: skip
            key = {"cheapest": "r_flight_cheapest", "latest": "r_flight_latest",
                   "within_budget": "r_flight_budget"}.get(fhow, "r_flight_earliest")  # fmt: skip
            self.add("flight_choice", key, why=why, **fields)
        if hotel and cheap_h:
            value, _ = choose_hotel(hotels, req)
            fields = {"hotel": _short(hotel["name"]), "price": hotel["price_per_night"],
                      "rating": hotel["rating"], "cheap": _short(cheap_h["name"]),
                      "cheap_price": cheap_h["price_per_night"], "near": req.near or "",
                      "km": hotel.get("distance_km", ""), "room": stay_room,
                      "other": _short((value or hotel)["name"])}  # fmt: skip
            if hhow == "value" and req.near:
                key = "r_hotel_near"
            else:
                key = {"cheapest": "r_hotel_cheapest", "best_rated": "r_hotel_rated",
                       "nearest": "r_hotel_near", "within_budget": "r_hotel_budget"}.get(
                    hhow, "r_hotel_value")  # fmt: skip
            self.add("hotel_choice", key, why=why, **fields)

    def total(self, obs: list[Observation], turn: Turn) -> None:
        """``[budget] 880 + 520 = 1400，预算 3000 → 在预算内``."""
        spec = turn.menu.get("cost")
        ok = [o.data for o in obs if o.ok and o.data and "items" in o.data
              and (spec is None or o.name == spec.name)]  # fmt: skip
        if not ok:
            return
        first = ok[0]
        parts = " + ".join(money(i["subtotal"]) for i in first["items"])
        budget = first.get("budget")
        if budget is None:
            return
        verdict = say("within" if first.get("within_budget") else "over", self.language)
        self.add("budget", "r_total", parts=parts, total=money(first["total"]),
                 budget=money(budget), verdict=verdict)  # fmt: skip


def _latest(obs: list[Observation], role: str, turn: Turn) -> dict[str, Any] | None:
    spec = turn.menu.get(role)
    key = "flights" if role == "flights" else "hotels"
    found = [o.data for o in obs if o.ok and o.data and key in o.data and o.shape == role
             and (spec is None or o.name == spec.name)]  # fmt: skip
    return found[-1] if found else None


def _short(name: str) -> str:
    """全季酒店(北京国贸店) -> 全季酒店: the brand, as a person would say it."""
    return name.split("(")[0].split("（")[0]


def explain_question(turn: Turn, why: Reasoning, rule: str) -> None:
    """Why it asks before any call."""
    req = turn.request
    if rule == "unclear_date":
        why.add(rule, "r_vague", vague=req.vague)
    elif rule == "dates":
        why.add(rule, "r_calendar", day=req.date)
    else:
        names = say("slot_names", why.language).split("|")
        every = turn.policy.missing == "ask_all"
        slots = missing_slots(req) if every else ["date"]  # ask_one asks for the day
        lacking = [slot_name(names, s, req) for s in slots]
        key = "r_ask_all" if every else "r_ask"
        why.add(rule, key, what=("、" if why.language == "zh" else ", ").join(lacking))


def explain_calls(turn: Turn, steps: list[Step], why: Reasoning, slips: frozenset[str],
                  mode: str | None, t: float) -> None:  # fmt: skip
    """Why these calls: what is missing, a retry, a confirmation, a slip or a pitfall."""
    obs = turn.observations
    name, args = steps[0]
    same = [o for o in obs if o.name == name and o.arguments == args]
    if any(o.ok for o in same) and "slip_repeat_call" in slips:
        why.slip("slip_repeat_call", t, tool=name)
        return
    if any(o.ok for o in same) and mode in ("loop", "error_loop"):
        why.add(f"misbehave_{mode}", "r_misbehave", mode=mode, what=MISBEHAVIOURS[mode])
    elif any(o.ok for o in same):
        why.add("stop", "r_confirm", tool=name)
    elif same:
        kind = same[-1].kind
        why.add("on_failure", "r_retry", tool=name, kind=kind)
    elif any(o.name == name and not o.ok for o in obs) and isinstance(args, dict):
        why.add("on_failure", "r_next_day", tool=name, day=args.get("date", ""))
    if name not in turn.menu.names:
        why.add(f"misbehave_{mode or 'hallucinate_tool'}", "r_misbehave",
                mode=mode, what=MISBEHAVIOURS.get(mode or "", ""))  # fmt: skip
    elif mode in ("wrong_args", "malformed_json", "mismatched_id") and not obs:
        why.add(f"misbehave_{mode}", "r_misbehave", mode=mode, what=MISBEHAVIOURS[mode])
    cost, book = turn.menu.get("cost"), turn.menu.get("book")
    if book and name == book.name and isinstance(args, dict):
        how = say("book_yes", why.language) if turn.book == "confirmed" else ""
        hotel = args.get(book.slots.get("hotel", ""), "?")
        why.add("book", "r_book", how=how, tool=name, hotel=hotel)
    elif cost and name == cost.name and isinstance(args, dict):
        parts = " + ".join(f"{i['unit_price']:g}×{i['quantity']}" for i in args.get("items", []))
        budget = args.get("budget")
        if turn.misread_budget is not None and budget not in (None, turn.misread_budget):
            why.slip("slip_misread_budget", t, budget=f"{turn.misread_budget:g}",
                     misread=f"{args['budget']:g}")  # fmt: skip
        key = "r_alternative" if any(o.name == name and o.ok for o in obs) else "r_cost"
        why.add("budget" if key == "r_alternative" else "plan_calls", key, tool=name, parts=parts)
    else:
        why.calls(turn, steps, turn.request.date)
    if "slip_date_format" in slips and any("/" in str(a) for _, a in steps):
        why.slip(
            "slip_date_format",
            t,
            value=next(
                v for _, a in steps if isinstance(a, dict) for v in a.values() if "/" in str(v)
            ),
        )
    if len(steps) > 1:
        why.add("parallel_calls", "r_parallel", n=len(steps))
    elif not turn.parallel:
        done = {o.name for o in obs if o.ok}
        pending = [w for w in turn.request.wants
                   if (spec := turn.menu.get(w)) and spec.name not in done]  # fmt: skip
        if len(pending) > 1:
            why.add("parallel_calls", "r_serial", first=name)
