"""Reading a travel request the way the embedded model does: plain rules, no learning.

``parse_request`` pulls origin, destination, date, budget, nights, a landmark and the needs
(flights, weather, hotels, cost) out of Chinese or English text. Rules only: it is a
deterministic stand-in for a model, and what it cannot read it leaves empty.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace

from ..data import TravelData
from ..dates import DATE_PATTERN, find_date, vague_date
from .budgets import BUDGET_WORDS, read_budget
from .normal import normalise, numerals

__all__ = ["TripRequest", "parse_request"]

_CJK = re.compile(r"[\u4e00-\u9fff]")
_WANTS = {
    "flights": r"航班|机票|飞|flight|fly|plane|air ?ticket",
    "weather": r"天气|下雨|下雪|带伞|气温|冷不冷|穿衣|穿什么|"
    r"weather|rain|umbrella|temperature|forecast|wear",
    "hotels": r"酒店|住宿|宾馆|订房|住[一二两三四五六七\d]晚|hotel|accommodation|place to stay",
    "cost": r"预算|总价|多少钱|费用|花费|budget|total cost|how much|cost",
}
_HOTEL_WORDS = r"酒店|住宿|宾馆|订房|hotel|accommodation|place to stay"
_TRIP = r"安排|行程|出差|旅行|旅游|去玩|玩|plan|trip|itinerary|travel"
# "那周六呢？", "what about …": a follow-up keeps the earlier request's needs.
_FOLLOW_UP = r"^(?:那|那么|还有)|呢[？?]?$|^(?:what|how) about\b|^and\b"
# "哪个更冷": compare the weather of the cities mentioned.
_COMPARE = (
    r"哪个(?:城市|地方)?更?(?:冷|暖和?|热|凉快)|哪里更?(?:冷|暖和?|热)|哪边更?(?:冷|暖和?|热)|"
    r"which (?:city |one |place )?is (?:colder|warmer|hotter)|colder|warmer|hotter"
)
# Place-like words after a direction marker, for cities the data does not know.
_ZH_PLACE = r"([\u4e00-\u9fff]{2})(?=出差|玩|旅游|旅行|出发|的|天气|，|,|。|！|？|\s|$|去|到|飞|看)"
# Before a city: where the trip starts or goes, in words or as a label ("出发地：上海", a
# carried fact or a memory item).
_FROM = (r"(从|from\s*|常住|常驻|家住|家在|(?:live|lives|living|based) in\s*|"
         r"(?:出发地|出发城市|origin|departure)\s*[:：]\s*)$")  # fmt: skip
_TO = r"(去|到|飞往|飞|至|to\s*|→|->|(?:目的地|destination)\s*[:：]\s*)$"
_BAD_PLACES = {"出差", "旅游", "旅行", "看看", "一下", "帮我", "周末", "明天", "后天", "今天"}


@dataclass
class TripRequest:
    """What a user asked for. Empty fields are unknown, never guessed."""

    text: str
    language: str  # "zh" or "en"
    origin: str | None = None
    destination: str | None = None
    date: str | None = None  # as written: "周五", "2025-01-10", "next Monday"
    dates: list[str] = field(default_factory=list)  # every date mentioned ("今天和明天")
    budget: float | None = None
    nights: int = 1
    near: str | None = None
    wants: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)  # every city-like word, in order
    vague: str | None = None  # a date that names no single day ("下个月"): ask which
    nights_stated: bool = False
    compare: bool = False  # "哪个更冷": the weather of each city mentioned
    guessed: bool = False  # no need named ("去广州"): the needs were read from the route
    follow_up: bool = False  # "那周六呢？", "what about Saturday?"
    each: bool = False  # "1月20日成都重庆天气": the weather of each city named, not compared
    #: slot -> the words that meant it but could not be read ("budget": "预算不多"): reported
    unread: dict[str, str] = field(default_factory=dict)

    def filled_from(self, earlier: list[TripRequest]) -> TripRequest:
        """Fill unknown slots from earlier requests of the same conversation (latest first).

        A turn that names no need ("周五", "那周六呢？", "what about Guangzhou?", "住两晚呢？")
        asks again for what the latest earlier request wanted; one that names its own need
        ("周日的天气呢？") asks for that alone."""
        out = replace(self, wants=list(self.wants))
        changed = out.date or out.destination or out.origin or out.nights_stated or out.vague
        past_wants = next((p for p in reversed(earlier) if p.wants), None)
        again = (out.guessed and out.follow_up) or not out.wants
        if past_wants is not None and again and changed:
            out.wants = list(past_wants.wants)
            out.compare = past_wants.compare and not out.destination
            out.each = past_wants.each and not out.destination
            if out.compare or out.each:
                out.mentions = list(past_wants.mentions)
        for past in reversed(earlier):
            if out.origin is None and past.origin and past.origin != out.destination:
                out.origin = past.origin
            if out.destination is None and past.destination and past.destination != out.origin:
                out.destination = past.destination
            out.date = out.date or past.date
            out.budget = out.budget if out.budget is not None else past.budget
            if not out.nights_stated and past.nights_stated:
                out.nights, out.nights_stated = past.nights, True
            out.near = out.near or (past.near if "hotels" in out.wants else None)
        if out.date:
            out.vague = None
        return out


def _cities(text: str, data: TravelData) -> list[tuple[int, str, str]]:
    """(position, canonical or raw name, raw) for each city-like mention, in order."""
    found: list[tuple[int, str, str]] = []
    taken = bytearray(len(text) + 1)  # 1 where a mention already stands: one lookup a place

    def take(start: int, end: int) -> None:
        taken[start:end] = b"\x01" * (end - start)

    for city in data.city_list:
        for key in (city.name, city.name_en, *[a for a in city.aliases if len(a) > 1]):
            flags = re.IGNORECASE if key.isascii() else 0
            pattern = rf"\b{re.escape(key)}\b" if key.isascii() else re.escape(key)
            for m in re.finditer(pattern, text, flags):
                if not any(taken[m.start() : m.end()]):
                    found.append((m.start(), city.name, m.group(0)))
                    take(m.start(), m.end())
    for m in re.finditer(rf"(?:从|去|到|飞往|飞)({_ZH_PLACE[1:]}", text):
        word = m.group(1)
        if word in _BAD_PLACES or taken[m.start(1)]:
            continue
        found.append((m.start(1), word, word))
        take(m.start(1), m.end(1))
    # The subject of a weather question: "明天示例城A会下雨吗" (article 002 §4.4).
    weather_subject = (
        r"(?:^|[，,。\s]|今天|明天|后天|周[一二三四五六日末]|星期[一二三四五六日天])"
        r"([\u4e00-\u9fff][\u4e00-\u9fffA-Za-z0-9]{1,5}?)(?=会下雨|下雨|会下雪|的天气|天气|冷不冷|热不热)"
    )
    for m in re.finditer(weather_subject, text):
        word, start = m.group(1), m.start(1)
        date = DATE_PATTERN.match(word)  # "明天示例城A": the date is not part of the place
        if date:
            word, start = word[date.end() :], start + date.end()
        if len(word) < 2 or word in _BAD_PLACES or taken[start]:
            continue
        if DATE_PATTERN.search(word) or word[0] in "和与及跟、":
            continue  # "今天和明天的天气": a date, not a place
        found.append((start, word, word))
        take(start, start + len(word))
    for m in re.finditer(r"\b(?:from|to|in)\s++([A-Z][a-zA-Z'\-]++)", text):
        word = m.group(1)
        if taken[m.start(1)] or word.lower() in {"the", "my", "a"}:
            continue
        if find_date(word):
            continue
        found.append((m.start(1), word, word))
        take(m.start(1), m.end(1))
    return sorted(found)


def _direction(text: str, mentions: list[tuple[int, str, str]]) -> tuple[str | None, str | None]:
    origin = destination = None
    for pos, name, _raw in mentions:
        before = text[max(0, pos - 12) : pos].lower()
        after = text[pos : pos + 8]
        if re.search(_FROM, before) or re.match(r"\w+\s*出发", after):
            origin = origin or name
        elif re.search(_TO, before):
            destination = destination or name
    rest = [name for _, name, _ in mentions if name not in (origin, destination)]
    if origin is None and destination is None and len(rest) >= 2:
        return rest[0], rest[1]
    if destination is None and rest:
        destination = rest.pop(0)
    if origin is None and rest and len(mentions) >= 2:
        origin = rest.pop(0)
    return origin, destination


def _nights(text: str) -> int:
    m = re.search(r"(?<!\d)(\d++)\s*+(?:个\s*+)?(?:晚|夜)", text) or re.search(
        r"(?<!\d)(\d++)\s*+nights?", text, re.IGNORECASE
    )
    return int(m.group(1)) if m else 1


def _near(text: str, data: TravelData) -> str | None:
    lower = text.lower()
    for landmark in data.landmarks:
        if landmark and landmark in text:
            return str(landmark)
    for english, landmark in data.landmarks_en.items():
        if english in lower:
            return landmark
    m = re.search(r"([\u4e00-\u9fff]{2,4})附近", text) or re.search(
        r"near (?:the )?([A-Za-z][\w ]{1,60}?)(?:[,.]|$| and)", text
    )
    return m.group(1) if m else None


def _date_matches(text: str, data: TravelData) -> list[re.Match[str]]:
    """The date expressions of ``text`` that are not inside a city's name (昆明天气 holds 明天,
    and is no date): the gazetteer wins."""
    names = [k for c in data.city_list for k in (c.name, *[a for a in c.aliases if len(a) > 1])
             if not k.isascii()]  # fmt: skip
    cities = bytearray(len(text) + 1)  # 1 inside a city's name: one lookup a character
    for n in names:
        for m in re.finditer(re.escape(n), text):
            cities[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    return [d for d in DATE_PATTERN.finditer(text) if not any(cities[d.start() : d.end()])]


def _joined_dates(matches: list[re.Match[str]], text: str) -> list[str]:
    """Dates asked for together: "今天和明天", "Saturday and Sunday" (else just the first)."""
    group = matches[:1]
    for prev, nxt in itertools.pairwise(matches):
        if prev is not group[-1]:
            break
        if text[prev.end() : nxt.start()].strip().lower() in {
            "和",
            "与",
            "、",
            "及",
            "跟",
            "and",
            ",",
            "，",
        }:
            group.append(nxt)
    return [m.group(0) for m in group]


def parse_request(text: str, data: TravelData) -> TripRequest:
    """Read one user message: normalised (:mod:`.normal`: full width, traditional characters,
    numbers in words), its dates masked before any place is looked for (so 1月18号昆明 is 昆明)."""
    raw, text = text, numerals(normalise(text))
    language = "zh" if _CJK.search(text) else "en"
    days = _date_matches(text, data)
    pieces, at = [], 0
    for d in days:  # no place is looked for inside a date (1月18号昆明 is 昆明)
        pieces += [text[at : d.start()], " " * len(d.group(0))]
        at = d.end()
    masked = "".join(pieces) + text[at:]
    mentions = _cities(masked, data)
    origin, destination = _direction(masked, mentions)
    wants = [w for w, p in _WANTS.items() if re.search(p, text, re.IGNORECASE)]
    budget = read_budget(text)
    if budget is not None and "cost" not in wants:
        wants.append("cost")
    compare = bool(re.search(_COMPARE, text, re.I))
    if compare:  # "北京和哈尔滨哪个冷": both sides, known to the data or not
        named = [name for _, name, _ in mentions]
        m = re.search(
            r"([\u4e00-\u9fff]{2,4}?)(?:和|跟|与|还是)([\u4e00-\u9fff]{2,4}?)(?=哪|谁|比)", masked
        )
        for side in m.groups() if m else ():
            if len(side) >= 2 and data.resolve_city(side) not in named and side not in named:
                mentions.append((m.start(), side, side) if m else (0, side, side))
        compare = len(mentions) >= 2
    known = [name for _, name, _ in mentions if data.resolve_city(name)]
    routed = re.search(r"从|去|到|飞|\bfrom\b|\bto\b|→|->", masked, re.I)
    each = (not compare and "weather" in wants and not {"flights", "hotels"} & set(wants)
            and len(set(known)) >= 2 and not routed)  # fmt: skip
    unread = {}
    if budget is None and (said := BUDGET_WORDS.search(text)):
        unread["budget"] = text[said.start() : said.start() + 12].split("，")[0].strip()
    # No need named (read from the route), or only the stay changed ("住两晚呢？").
    stay_only = wants == ["hotels"] and not re.search(_HOTEL_WORDS, text, re.I)
    guessed = stay_only or not [w for w in wants if w != "cost"]
    if compare or each:
        wants = ["weather"]
    elif not [w for w in wants if w != "cost"] and destination and re.search(_TRIP, text, re.I):
        wants = (["flights"] if origin else []) + ["weather", "hotels"] + wants
    elif not [w for w in wants if w != "cost"] and destination:
        wants = (["flights"] if origin else ["weather"]) + wants  # a route: its flights
    date = days[0].group(0) if days else None
    return TripRequest(
        text=raw,
        language=language,
        origin=origin,
        destination=destination,
        date=date,
        dates=_joined_dates(days, text),
        budget=budget,
        nights=_nights(text),
        near=_near(text, data) if "hotels" in wants else None,
        wants=wants,
        mentions=list(dict.fromkeys(known if each else [name for _, name, _ in mentions])),
        vague=None if date else vague_date(text),
        nights_stated=_nights(text) != 1 or bool(re.search(r"[1一]\s*晚|1\s*night", text, re.I)),
        compare=compare,
        guessed=guessed,
        follow_up=bool(re.search(_FOLLOW_UP, text.strip(), re.I)),
        each=each,
        unread=unread,
    )
