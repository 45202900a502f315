"""How TravelModel reads tool results and writes its final answer (Chinese or English).

The answer cites flight number, times, price, weather, hotel and a budget verdict (article
000 §6: the "output rules"), offers an alternative when over budget, and says plainly what
is missing or failed instead of inventing it.
"""

from __future__ import annotations

from typing import Any

from .data import TravelData
from .intent import TripRequest
from .observations import (
    AIRLINES_EN,
    Observation,
    choose_flight,
    choose_hotel,
    dress_advice,
    fabricated_answer,
    money,
)

__all__ = ["Observation", "choose_flight", "choose_hotel", "compose_answer"]


class _Writer:
    def __init__(self, req: TripRequest, data: TravelData) -> None:
        self.zh = req.language == "zh"
        self.req = req
        self.data = data
        self.lines: list[str] = []

    def city(self, name: str) -> str:
        """A city name in the answer's language."""
        if self.zh or self.data.resolve_city(name) is None:
            return name
        return self.data.city(self.data.resolve_city(name) or name).name_en

    def t(self, zh: str, en: str) -> str:
        return zh if self.zh else en

    def add(self, zh: str, en: str) -> None:
        self.lines.append(self.t(zh, en))


def _when(data: dict[str, Any], zh: bool) -> str:
    day = data.get("date") or data.get("check_in") or ""
    weekday = data.get("weekday", "")
    if zh:
        return f"{day}（{weekday}）" if weekday else day
    names = dict(
        zip("一二三四五六日", ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], strict=True)
    )
    return f"{day} ({names.get(weekday[-1:], '')})" if weekday else day


def _failure(w: _Writer, what_zh: str, what_en: str, obs: list[Any]) -> None:
    last = obs[-1]
    if last.kind == "unknown_city":
        return  # said once, at the top of the answer
    else:
        w.add(
            f"{what_zh}：暂时无法获取（{last.error}）。请稍后再试，以下建议基于其余信息。",
            f"{what_en}: unavailable right now ({last.error}); the rest of this answer does "
            "without it.",
        )


def compose_answer(
    req: TripRequest, observations: list[Any], data: TravelData, *, invent: bool = False
) -> str:
    """The final answer from the request and this turn's tool results."""
    if invent:
        return fabricated_answer(req)
    w = _Writer(req, data)
    unknown = list(dict.fromkeys(o.city for o in observations if o.kind == "unknown_city"))
    if unknown:
        known = "、".join(data.city_names)
        names = "、".join(f"「{c}」" for c in unknown)
        w.add(
            f"抱歉，数据中没有{names}的信息，无法提供这个城市的航班、天气或酒店；我不会编造数据。"
            f"可查询的城市有：{known}。",
            f"Sorry, the data has nothing for {', '.join(unknown)}, so I cannot give flights, "
            f"weather or hotels there, and I will not make them up. Cities I know: "
            f"{', '.join(c.name_en for c in data.city_list)}.",
        )
        return "\n".join(w.lines)
    by: dict[str, list[Any]] = {}
    for o in observations:
        by.setdefault(o.name, []).append(o)
    if not req.wants:
        if req.origin and not req.destination:
            w.add(f"好的，记下了：从{req.origin}出发。请告诉我目的地和日期。",
                  f"Noted: leaving from {req.origin}. Where to, and on which day?")  # fmt: skip
        else:
            w.add(
                "我是差旅助手（一个确定性的示例模型，不是大模型）：可以帮你查询航班、天气和酒店，"
                "并计算行程预算。请告诉我出发地、目的地、日期和预算，例如「我周五从上海去北京出差，"
                "预算3000以内」。",
                "I am a travel assistant (a deterministic example model, not an LLM): I look up "
                "flights, weather and hotels and check the budget. Tell me where from, where to, "
                "when, and your budget.",
            )
        return "\n".join(w.lines)
    _flights(w, req, by.get("search_flights", []))
    _weather(w, req, by.get("search_weather", []))
    _hotels(w, req, by.get("search_hotels", []))
    _cost(w, req, by.get("calculate_cost", []))
    if not w.lines:
        w.add("抱歉，我没能查到任何信息。", "Sorry, I could not find anything.")
    return "\n".join(w.lines)


def _flights(w: _Writer, req: TripRequest, obs: list[Any]) -> None:
    if "flights" not in req.wants:
        return
    if not req.origin or not req.destination:
        w.add("航班：请告诉我出发城市和目的地，我再帮你查航班。",
              "Flights: tell me where you leave from and where you go, and I will search.")  # fmt: skip
        return
    data = _latest(w, req, obs, "flights", "航班", "Flights")
    if data is None:
        return
    best, cheapest = choose_flight(data)
    when = _when(data, w.zh)
    if best is None:
        note = data.get("note") or w.t("当天航班均已售罄", "every flight that day is sold out")
        w.add(f"航班：{data['departure']}→{data['destination']} {when}没有可订的航班（{note}）。",
              f"Flights: nothing bookable from {w.city(data['departure'])} to "
              f"{w.city(data['destination'])} on {when} ({note}).")  # fmt: skip
        return
    assert cheapest is not None
    w.add(
        f"航班：推荐 {best['flight_no']}（{best['airline']}），{when}{best['departure_time']} 从"
        f"{best['departure_airport']}起飞，{best['arrival_time']} 到达{best['arrival_airport']}，"
        f"票价 {best['price']} 元（余票 {best['seats_left']} 张）。",
        f"Flight: {best['flight_no']} ({AIRLINES_EN.get(best['airline'], best['airline'])}), "
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


def _latest(
    w: _Writer, req: TripRequest, obs: list[Any], want: str, what_zh: str, what_en: str
) -> dict[str, Any] | None:
    """The latest good result for a wanted section; reports a failure and returns None."""
    if want not in req.wants:
        return None
    ok = [o for o in obs if o.ok and o.data]
    if ok:
        data: dict[str, Any] = ok[-1].data
        return data
    if obs:
        _failure(w, what_zh, what_en, obs)
    return None


def _weather(w: _Writer, req: TripRequest, obs: list[Any]) -> None:
    if "weather" in req.wants and not req.destination:
        w.add("天气：请告诉我要查哪个城市的天气。", "Weather: which city should I look up?")
        return
    days = [o for o in obs if o.ok and o.data] if len(req.dates) > 1 else []
    if len(days) > 1:
        for o in days:
            _weather_line(w, o.data)
        return
    d = _latest(w, req, obs, "weather", "天气", "Weather")
    if d is not None:
        _weather_line(w, d)


def _weather_line(w: _Writer, d: dict[str, Any]) -> None:
    if not d.get("condition"):
        w.add(f"天气：{d['city']} {_when(d, True)} 暂无天气数据。",
              f"Weather: no weather data for {d['city']} on {_when(d, False)}.")  # fmt: skip
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


def _hotels(w: _Writer, req: TripRequest, obs: list[Any]) -> None:
    if "hotels" in req.wants and not req.destination:
        w.add("酒店：请告诉我要住在哪个城市。", "Hotel: in which city?")
        return
    data = _latest(w, req, obs, "hotels", "酒店", "Hotel")
    if data is None:
        return
    best, _cheap = choose_hotel(data, req)
    if best is None:
        note = data.get("note", "")
        w.add(f"酒店：{data['city']} {_when(data, True)}没有可订的酒店（{note}）。",
              f"Hotel: nothing available in {data['city']} on {_when(data, False)} ({note}).")  # fmt: skip
        return
    nights = best["nights"]
    near_zh = f"，距{best['landmark']} {best['distance_km']} 公里" if req.near else ""
    near_en = f", {best['distance_km']} km from {req.near}" if req.near else ""
    w.add(
        f"酒店：{best['name']}（{best['district']}·{best['landmark']}，评分 {best['rating']}{near_zh}），"
        f"{best['price_per_night']} 元/晚 × {nights} 晚 = {best['total_price']} 元。",
        f"Hotel: {best['name_en']} ({best['district']}, rating {best['rating']}{near_en}), "
        f"{best['price_per_night']} CNY/night × {nights} = {best['total_price']} CNY.",
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
    if data.get("note"):
        w.add(f"（{data['note']}）", f"({data['note']})")


def _cost(w: _Writer, req: TripRequest, obs: list[Any]) -> None:
    if "cost" not in req.wants:
        return
    ok = [o for o in obs if o.ok and o.data]
    if not ok:
        if obs:
            _failure(w, "预算", "Budget", obs)
        else:
            w.add("预算：缺少航班或酒店的价格，无法计算总价。",
                  "Budget: without flight or hotel prices I cannot total the trip.")  # fmt: skip
        return
    first = ok[0].data
    parts = " + ".join(f"{money(i['subtotal'])}" for i in first["items"])
    total, budget = first["total"], first.get("budget")
    if budget is None:
        w.add(
            f"费用：{parts} = 合计 {money(total)} 元。",
            f"Cost: {parts} = {money(total)} CNY in total.",
        )
        return
    if first["within_budget"]:
        w.add(
            f"预算：{parts} = 合计 {money(total)} 元，在 {money(budget)} 元预算内（剩余 {money(first['remaining'])} 元）。",
            f"Budget: {parts} = {money(total)} CNY, within your {money(budget)} CNY budget "
            f"({money(first['remaining'])} CNY to spare).",
        )
        return
    w.add(
        f"预算：{parts} = 合计 {money(total)} 元，超出 {money(budget)} 元预算 {money(-first['remaining'])} 元。",
        f"Budget: {parts} = {money(total)} CNY, {money(-first['remaining'])} CNY over your "
        f"{money(budget)} CNY budget.",
    )
    if len(ok) < 2:
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
