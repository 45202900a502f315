# ruff: noqa: E501  (Chinese and English sentences side by side)
"""The sections of TravelModel's answer: flights, weather, hotel, budget (article 000 §6)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .degraded import alternative_heads, budget_lead, fare_line, kept_line, offer_line
from .failures import REASONS
from .failures import when as _when
from .intent import TripRequest
from .observations import AIRLINES_EN, choose_flight, choose_hotel, dress_advice, money
from .summary import compare_weather
from .writer import Writer, failure, latest

__all__ = ["NOTES", "cost", "flights", "hotels", "unread_fare", "weather"]

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
        _flight(w, later, *alternative_heads(req, later))
        w.add(*kept_line(req, later))
        return
    bookable = [o for o in obs if o.ok and o.data and choose_flight(o.data)[0]]
    data = latest(w, req, bookable or obs, "flights", "航班", "Flights")
    if data is not None:
        _flight(w, data, "航班：推荐 ", "Flight: ")


def unread_fare(req: TripRequest, obs: list[Any]) -> bool:
    """Were the flights looked up and came back as prose, with no usable result? (The budget
    then says the fare is left out.)"""
    usable = [o for o in obs if o.ok and o.data]
    return (
        bool(req.origin and req.destination and obs and not usable) and obs[-1].kind == "not_data"
    )


def _ask_route(w: Writer, req: TripRequest) -> None:
    if req.destination:
        to = w.city(req.destination)
        w.add(f"航班：请问从哪个城市出发去{to}？告诉我出发城市，我再帮你查航班。",
              f"Flights: which city do you leave from for {to}? Tell me, and I will search.")  # fmt: skip
    elif req.origin:
        since = w.city(req.origin)
        w.add(f"航班：请问从{since}去哪个城市？告诉我目的地，我再帮你查航班。",
              f"Flights: where do you fly to from {since}? Tell me, and I will search.")  # fmt: skip
    else:
        w.add("航班：请告诉我出发城市和目的地，我再帮你查航班。",
              "Flights: tell me where you leave from and where you go, and I will search.")  # fmt: skip


def _flight(w: Writer, data: dict[str, Any], head_zh: str, head_en: str) -> None:
    best, cheapest = choose_flight(data, w.style.flight_how, w.style.flight_room)
    when = _when(data, w.zh)
    if best is None:
        note = w.t(*NOTES.get(data.get("reason", ""), NOTES["sold_out"]))
        w.add(f"航班：{data['departure']}→{data['destination']} {when}没有可订的航班（{note}）。",
              f"Flights: nothing bookable from {w.city(data['departure'])} to "
              f"{w.city(data['destination'])} on {when} ({note}).")  # fmt: skip
        return
    assert cheapest is not None
    w.add(
        f"{head_zh}{best['flight_no']}（{best['airline']}），{when}{best['departure_time']} 从"
        f"{best['departure_airport']}起飞，{best['arrival_time']} 到达{best['arrival_airport']}，"
        f"票价 {best['price']} 元（余票 {best['seats_left']} 张）。",
        f"{head_en}{best['flight_no']} ({AIRLINES_EN.get(best['airline'], best['airline'])}), "
        f"{when}, departs {best.get('departure_airport_code', '')} {best['departure_time']}, "
        f"arrives {best.get('arrival_airport_code', '')} {best['arrival_time']}, "
        f"{best['price']} CNY ({best['seats_left']} seats left).",
    )
    count = len(data["flights"])
    if cheapest is best:
        w.add(
            f"当天共 {count} 个航班，它也是最低价。",
            f"It is also the cheapest of {count} flights that day.",
        )
    else:
        w.add(
            f"当天共 {count} 个航班，最低价为 {cheapest['flight_no']}（{cheapest['departure_time']}，"
            f"{cheapest['price']} 元）。",
            f"{count} flights that day; the cheapest is {cheapest['flight_no']} "
            f"({cheapest['departure_time']}, {cheapest['price']} CNY).",
        )


def _reason(failure: Any) -> tuple[str, str]:
    """Why the asked day has no flights: the tool's failure, or the result's reason."""
    if failure.ok:
        return NOTES.get((failure.data or {}).get("reason", ""), NOTES["sold_out"])
    return REASONS.get(failure.kind, REASONS["tool_error"])


def _landmark_en(w: Writer, hotel: dict[str, Any]) -> str:
    """The hotel's landmark in English, from the dataset (the tool result has it in Chinese)."""
    rows = w.data.hotels[w.data.hotels["name"] == hotel["name"]]
    return str(rows["landmark_en"].iloc[0]) if len(rows) and rows["landmark_en"].iloc[0] else ""


def weather(w: Writer, req: TripRequest, obs: list[Any]) -> None:
    if "weather" in req.wants and not req.destination and not req.compare:
        w.add("天气：请告诉我要查哪个城市的天气。", "Weather: which city should I look up?")
        return
    if req.compare:
        found = [o.data for o in obs if o.ok and o.data and o.data.get("condition")]
        for d in found:
            _weather_line(w, d)
        if len(found) < len(obs):
            failure(w, "天气", "Weather", [o for o in obs if not o.ok] or obs)
        w.add(
            *[compare_weather(replace(req, language=lang), found, w.city) for lang in ("zh", "en")]
        )
        return
    days = [o for o in obs if o.ok and o.data] if len(req.dates) > 1 else []
    if len(days) > 1:
        for o in days:
            _weather_line(w, o.data)
        return
    d = latest(w, req, obs, "weather", "天气", "Weather")
    if d is not None:
        _weather_line(w, d)


def _weather_line(w: Writer, d: dict[str, Any]) -> None:
    if not d.get("condition"):
        w.add(f"天气：{d['city']} {_when(d, True)} 暂无天气数据。",
              f"Weather: no weather data for {w.city(d['city'])} on {_when(d, False)}.")  # fmt: skip
        return
    dress_zh, dress_en = dress_advice(d["temp_min_c"], d["temp_max_c"])
    advice_zh, advice_en = [dress_zh], [dress_en]
    if d["temp_min_c"] <= 0:
        advice_zh.append("气温在零度以下，注意保暖")
        advice_en.append("below freezing, dress warmly")
    if d["precip_prob"] >= 0.5:
        advice_zh.append("建议带伞")
        advice_en.append("take an umbrella")
    w.add(
        f"天气：{d['city']} {_when(d, True)}{d['condition']}，{d['temp_min_c']}～{d['temp_max_c']}°C，"
        f"降水概率 {d['precip_prob']:.0%}"
        + ("，" + "，".join(advice_zh) if advice_zh else "")
        + "。",
        f"Weather: {w.city(d['city'])} on {_when(d, False)}: {d['condition_en']}, {d['temp_min_c']} to "
        f"{d['temp_max_c']} °C, {d['precip_prob']:.0%} chance of rain"
        + ("; " + ", ".join(advice_en) if advice_en else "")
        + ".",
    )


def hotels(w: Writer, req: TripRequest, obs: list[Any]) -> None:
    if "hotels" in req.wants and not req.destination:
        w.add("酒店：请告诉我要住在哪个城市。", "Hotel: in which city?")
        return
    data = latest(w, req, obs, "hotels", "酒店", "Hotel")
    if data is None:
        return
    best, _cheap = choose_hotel(data, req, w.style.hotel_how, w.style.hotel_room)
    if best is None:
        note = w.t(*NOTES.get(data.get("reason", ""), NOTES["no_rooms"]))
        w.add(f"酒店：{data['city']} {_when(data, True)}没有可订的酒店（{note}）。",
              f"Hotel: nothing available in {w.city(data['city'])} on {_when(data, False)} ({note}).")  # fmt: skip
        return
    nights, per_night, total = best["nights"], best["price_per_night"], best["total_price"]
    estimate_zh = estimate_en = ""
    if nights < req.nights:  # a tool without `nights` (article 000): the first night's rate
        nights, total = req.nights, per_night * req.nights
        estimate_zh, estimate_en = (
            "（按入住当晚价格估算）",
            " (estimated at the first night's rate)",
        )
    elif best.get("nightly_prices") and len(set(best["nightly_prices"])) > 1:
        each = " + ".join(str(p) for p in best["nightly_prices"])
        estimate_zh, estimate_en = f"（逐晚价格 {each}）", f" (night by night: {each})"
    elif not req.nights_stated:
        estimate_zh, estimate_en = (
            "（未说明住几晚，按 1 晚计）",
            " (no number of nights given: 1 night)",
        )
    near_zh = f"，距{best['landmark']} {best['distance_km']} 公里" if req.near else ""
    near_en = f", {best['distance_km']} km from {req.near}" if req.near else ""
    day_zh, day_en = "", ""
    if w.moved:  # the flights offered are for another day: say which night this is
        day_zh, day_en = f"{_when(data, True)}入住，", f"check-in {_when(data, False)}, "
    w.add(
        f"酒店：{day_zh}{best['name']}（{best['district']}·{best['landmark']}，评分 {best['rating']}{near_zh}），"
        f"{per_night} 元/晚 × {nights} 晚 = {total} 元{estimate_zh}。",
        f"Hotel: {day_en}{best['name_en']} ({_landmark_en(w, best)}, rating {best['rating']}{near_en}), "
        f"{per_night} CNY/night × {nights} = {total} CNY{estimate_en}.",
    )
    others = [h for h in data["hotels"] if h["name"] != best["name"]][:2]
    if others:
        w.add(
            "其他可选："
            + "；".join(f"{h['name']} {h['price_per_night']} 元/晚" for h in others)
            + "。",
            "Also available: "
            + "; ".join(f"{h['name_en']} {h['price_per_night']} CNY/night" for h in others)
            + ".",
        )
    if data.get("reason") in NOTES:
        zh, en = _note(data, req)
        w.add(f"（{zh}）", f"({en})")


def cost(w: Writer, req: TripRequest, obs: list[Any]) -> None:
    if "cost" not in req.wants:
        return
    lead = ("", "")
    if w.moved:
        lead = budget_lead(req)
    elif w.outline.no_fare:
        lead = (
            "不含机票（航班结果无法读取），",
            "without the flight (its result could not be read), ",
        )
    _cost(w, req, obs, *lead)
    if w.moved:  # the other day's fare, apart: never added to the asked day's hotel
        w.add(*fare_line(req, w.moved))


def _cost(w: Writer, req: TripRequest, obs: list[Any], lead_zh: str, lead_en: str) -> None:
    ok = [o for o in obs if o.ok and o.data]
    if not ok:
        if obs:
            failure(w, "预算", "Budget", obs)
        else:
            why_zh, why_en = "", " yet"
            if w.style.stopped:  # the wrap-up call after max_iterations
                why_zh, why_en = "（调用次数已到上限）", " (the call limit was reached first)"
            w.add(f"预算：还没有用工具算出总价{why_zh}，暂不下结论。",
                  f"Budget: the total has not been calculated with the tool{why_en}, so no verdict.")  # fmt: skip
        return
    first = ok[0].data
    parts = " + ".join(f"{money(i['subtotal'])}" for i in first["items"])
    total, budget = first["total"], first.get("budget")
    if budget is None:
        w.add(
            f"费用：{lead_zh}{parts} = 合计 {money(total)} 元。",
            f"Cost: {lead_en}{parts} = {money(total)} CNY in total.",
        )
        return
    if first["within_budget"]:
        w.add(
            f"预算：{lead_zh}{parts} = 合计 {money(total)} 元，在 {money(budget)} 元预算内（剩余 {money(first['remaining'])} 元）。",
            f"Budget: {lead_en}{parts} = {money(total)} CNY, within your {money(budget)} CNY budget "
            f"({money(first['remaining'])} CNY to spare).",
        )
        return
    w.add(
        f"预算：{lead_zh}{parts} = 合计 {money(total)} 元，超出 {money(budget)} 元预算 {money(-first['remaining'])} 元。",
        f"Budget: {lead_en}{parts} = {money(total)} CNY, {money(-first['remaining'])} CNY over your "
        f"{money(budget)} CNY budget.",
    )
    if len(ok) < 2:
        if not w.style.alternatives:
            return
        w.add("没有更便宜的组合可选，建议调整日期或减少住宿晚数。",
              "There is no cheaper combination; consider another date or fewer nights.")  # fmt: skip
        return
    alt = ok[1].data
    labels = "、".join(i["label"] for i in alt["items"])
    if alt["within_budget"]:
        w.add(
            f"备选方案：{labels}，合计 {money(alt['total'])} 元，在预算内（剩余 {money(alt['remaining'])} 元）。",
            f"Alternative: {labels}, {money(alt['total'])} CNY in total, within budget "
            f"({money(alt['remaining'])} CNY to spare).",
        )
    else:
        w.add(
            f"备选方案：即使选择最便宜的组合（{labels}）也需 {money(alt['total'])} 元，仍超出预算 "
            f"{money(-alt['remaining'])} 元；建议调整日期、减少住宿晚数或提高预算。",
            f"Alternative: even the cheapest combination ({labels}) costs {money(alt['total'])} "
            f"CNY, still {money(-alt['remaining'])} CNY over; consider another date, fewer nights "
            "or a larger budget.",
        )
