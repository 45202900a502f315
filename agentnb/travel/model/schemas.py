"""How TravelModel reads the tool schemas of a request: which tool does what, which parameter
takes which value, and in which date format (article 000 §2.2, §4.3).

The model sees only ``request.tools`` (OpenAI tool schemas), never the Python tools. Each
offered tool gets a *role* (flights, weather, hotels, cost, and book: a booking tool) and each
role's *slots* (origin, destination, city, date, nights, near, items, budget, hotel) are
matched to parameter names:

1. by name: the parameter's name, split on ``_``/``-`` and lower-cased, contains one of the
   slot's name words (``from_city`` → origin because of ``from``; ``departure`` → origin);
2. else by description: the parameter's description contains one of the slot's description
   words (``出发地``, ``目的地``, ``日期``, ``city``…).

Slots are filled in a fixed order (date first, so ``departure_date`` is a date, not an origin),
and a parameter serves one slot only. A slot with no parameter is left out of the call.

A date slot is sent as ISO ``YYYY-MM-DD`` when its description asks for that format and does
not also allow relative dates (相对, relative, 周五, 明天, tomorrow), or when its JSON schema
says ``"format": "date"``; otherwise the date goes as the user wrote it ("周五") and the tool
resolves it (000 §4.3: relative dates are the tool's job).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ROLE_WORDS", "SLOT_WORDS", "Menu", "ToolSpec", "describes", "read_menu", "tool_role"]

#: A tool's role: words in its name (first) or description.
ROLE_WORDS: dict[str, tuple[str, ...]] = {
    "book": ("book", "reserve", "预订酒店"),  # before hotels: book_hotel books, it does not search
    "flights": ("flight", "航班", "机票"),
    "weather": ("weather", "天气", "forecast"),
    "hotels": ("hotel", "酒店", "住宿", "lodging"),
    "cost": ("cost", "总价", "费用", "price_total", "calculate", "sum"),
}
#: Each role's slots, in the order they are matched.
ROLE_SLOTS: dict[str, tuple[str, ...]] = {
    "flights": ("date", "origin", "destination"),
    "weather": ("date", "city"),
    "hotels": ("date", "nights", "near", "city"),
    "cost": ("items", "budget"),
    "book": ("date", "nights", "hotel", "city"),
}
#: slot -> (name words, description words)
SLOT_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "date": (("date", "day", "when", "checkin", "check"), ("日期", "date", "哪天", "入住")),
    "origin": (("departure", "from", "origin", "source", "start"),
               ("出发地", "出发城市", "departure", "origin", "from")),
    "destination": (("destination", "to", "dest", "arrival", "arrive"),
                    ("目的地", "到达", "destination", "arrival")),
    "city": (("city", "location", "place", "where"), ("城市", "city", "地点")),
    "nights": (("nights", "night", "duration", "stay"), ("晚", "nights")),
    "near": (("near", "landmark", "area", "district"), ("地标", "附近", "landmark", "near")),
    "items": (("items", "lines", "expenses", "costs"), ("明细", "items", "expense")),
    "budget": (("budget", "limit", "max"), ("预算", "budget")),
    "hotel": (("hotel", "name"), ("酒店名称", "hotel's name")),
}  # fmt: skip
_ISO_WORDS = re.compile(r"YYYY-MM-DD|ISO", re.IGNORECASE)
_RELATIVE_WORDS = re.compile(r"相对|relative|周五|明天|tomorrow|friday", re.IGNORECASE)


@dataclass
class ToolSpec:
    """One offered tool, as the model understands its schema."""

    name: str
    role: str
    slots: dict[str, str] = field(default_factory=dict)  # slot -> parameter name
    iso_dates: bool = False  # the date parameter asks for YYYY-MM-DD
    required: tuple[str, ...] = ()

    def args(self, values: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments: each known slot under its parameter name."""
        return {self.slots[k]: v for k, v in values.items() if k in self.slots and v is not None}


@dataclass
class Menu:
    """The tools of one request, by role (the first tool of each role wins)."""

    specs: dict[str, ToolSpec] = field(default_factory=dict)

    def get(self, role: str) -> ToolSpec | None:
        return self.specs.get(role)

    @property
    def names(self) -> set[str]:
        return {s.name for s in self.specs.values()}

    def __bool__(self) -> bool:
        return bool(self.specs)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[_\-\s]+", name.lower()) if w]


def describes(sentence: str) -> bool:
    """Does a description sentence say what a tool does (a role's or a slot's words)? The
    stand-in reads such a sentence for the tool's role and parameters (never as a knob)."""
    text = sentence.lower()
    words = [w for ws in ROLE_WORDS.values() for w in ws]
    words += [w for _, described in SLOT_WORDS.values() for w in described]
    words += [
        "search",
        "查询",
        "look up",
        "find",
        "查找",
        "搜索",
        "返回",
        "return",
        "price",
        "价格",
    ]
    return any(w.lower() in text for w in words)


def tool_role(function: dict[str, Any]) -> str | None:
    """flights / weather / hotels / cost / book: by the tool's name first, else its
    description."""
    name, text = str(function.get("name", "")).lower(), str(function.get("description") or "")
    for role, words in ROLE_WORDS.items():
        if any(w in name for w in words):
            return role
    for role, words in ROLE_WORDS.items():
        if any(w in text.lower() for w in words):
            return role
    return None


def _match(slot: str, params: dict[str, Any], taken: set[str]) -> str | None:
    names, described = SLOT_WORDS[slot]
    free = [p for p in params if p not in taken]
    for p in free:
        if any(w in _words(p) or (len(w) > 3 and w in p.lower()) for w in names):
            return p
    for p in free:
        text = str((params[p] or {}).get("description") or "").lower()
        if any(w.lower() in text for w in described):
            return p
    return None


def _spec(function: dict[str, Any], role: str) -> ToolSpec:
    """A tool's slots from its schema; a schema of any other shape leaves them empty."""
    schema = function.get("parameters")
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties")
    params: dict[str, Any] = {
        str(k): (v if isinstance(v, dict) else {})
        for k, v in (properties.items() if isinstance(properties, dict) else ())
    }
    required = schema.get("required")
    required = tuple(map(str, required)) if isinstance(required, list) else ()
    spec = ToolSpec(str(function.get("name") or "?"), role, required=required)
    taken: set[str] = set()
    for slot in ROLE_SLOTS[role]:
        found = _match(slot, params, taken)
        if found:
            spec.slots[slot] = found
            taken.add(found)
    date = spec.slots.get("date")
    if date:
        prop = params[date] or {}
        text = str(prop.get("description") or "")
        iso = bool(_ISO_WORDS.search(text)) and not _RELATIVE_WORDS.search(text)
        spec.iso_dates = iso or prop.get("format") == "date"
    return spec


def read_menu(tools: list[dict[str, Any]]) -> Menu:
    """Read ``request.tools``: tools whose role cannot be told are ignored by the model."""
    menu = Menu()
    for t in tools:
        function = t.get("function") if isinstance(t, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            continue  # not a function tool (a hosted tool, or a malformed entry)
        role = tool_role(function)
        if role and role not in menu.specs:
            menu.specs[role] = _spec(function, role)
    return menu
