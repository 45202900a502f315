"""The four tools of article 000: search_flights, search_weather, search_hotels, calculate_cost.

They query the bundled dataset with pandas and return structured JSON (article 000 §4.3).
Relative dates are normalised here, against ``today``, not by the model. An unknown city
is a ``ToolError`` listing the known cities: never invented data. Faults can be switched
on per tool for lessons (article 000 §5.2)::

    desk = TravelTools()
    desk.inject("search_weather", "timeout")   # or upstream_error, rate_limit, empty, noisy
    desk.inject("search_flights", "upstream_error", date="周五")   # that day only
    desk.clear()

``hints=True`` adds a hint to each search result ("无需重复查询", 000 §5.1). Failures carry a
``code`` (unknown_city, bad_date, …) and empty results a ``reason``: see failures.py. ``noisy``
is no failure: a good result with an irrelevant error text in it (002 §2.1).
"""

from __future__ import annotations

from datetime import date as Date
from datetime import timedelta
from typing import Annotated, Any

import pandas as pd
from pydantic import BaseModel, Field

from ..tools.tool import Tool, ToolError
from .data import TravelData, load
from .dates import DEFAULT_TODAY, resolve_date
from .faults import FAULTS, FaultInjection, UpstreamError

__all__ = ["FAULTS", "CostItem", "TravelTools", "UpstreamError"]

WEEKDAYS = "一二三四五六日"


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


class CostItem(BaseModel):
    """One line of a cost calculation."""

    label: Annotated[
        str, Field(description="费用名称，如 机票 MU5101 或 酒店 全季 (expense label)")
    ]
    unit_price: Annotated[float, Field(ge=0, description="单价，人民币元 (unit price in CNY)")]
    quantity: Annotated[int, Field(ge=1, description="数量，如 晚数 (quantity, e.g. nights)")] = 1


class TravelTools(FaultInjection):
    """The travel tools bound to a reference date, a dataset and a set of injected faults."""

    def __init__(
        self,
        today: Date | str = DEFAULT_TODAY,
        *,
        faults: dict[str, str] | None = None,
        timeout: float = 5.0,
        data: TravelData | None = None,
        hints: bool = False,
    ) -> None:
        self.today = Date.fromisoformat(today) if isinstance(today, str) else today
        self.data = data or load()
        self.timeout = timeout
        self.faults: dict[str, str] = {}
        self.fault_days: dict[str, str] = {}
        self.hints = hints  # add HINT to search results (000 §5.1)
        for name, fault in (faults or {}).items():
            self.inject(name, fault)
        self.tools: list[Tool] = [
            Tool(self.search_flights, timeout=timeout),
            Tool(self.search_weather, timeout=timeout),
            Tool(self.search_hotels, timeout=timeout),
            Tool(self.calculate_cost, timeout=timeout),
        ]

    # -- helpers -------------------------------------------------------------------------
    def _city(self, text: str, field: str) -> str:
        city = self.data.resolve_city(text)
        if city is None:
            known = "、".join(self.data.city_names)
            raise ToolError(
                f"unknown city {text!r} for {field} (数据中没有该城市)",
                hint=f"known cities: {known} (English names work too). Do not invent data: tell "
                "the user there is no information for this city.",
                data={"code": "unknown_city", "city": text, "known_cities": self.data.city_names},
            )
        return city

    def _date(self, text: str, field: str = "date") -> Date:
        try:
            day = resolve_date(text, self.today)
        except ValueError as exc:
            raise ToolError(
                str(exc),
                hint=f"pass {field} as YYYY-MM-DD or 周五/明天; ask the user which day they mean",
                data={"code": "bad_date", "date": text},
            ) from None
        first, last = self.data.first_day, self.data.last_day
        if not first <= day <= last:
            raise ToolError(
                f"no data for {day.isoformat()}: the dataset covers {first} to {last}",
                hint="tell the user this date is outside the available data",
                data={
                    "code": "date_out_of_range",
                    "date": day.isoformat(),
                    "first_day": first.isoformat(),
                    "last_day": last.isoformat(),
                },
            )
        return day

    @staticmethod
    def _day(day: Date) -> dict[str, str]:
        return {"date": day.isoformat(), "weekday": "周" + WEEKDAYS[day.weekday()]}

    # -- the tools -------------------------------------------------------------------------
    async def search_flights(self, departure: str, destination: str, date: str) -> dict[str, Any]:
        """查询指定日期从出发地到目的地的航班列表（航班号、起降时间、机场、票价、余票）。

        Search flights from one city to another on a date.

        Args:
            departure: 出发地城市名，如 上海 (departure city; English names work too)
            destination: 目的地城市名，如 北京 (destination city)
            date: 出发日期，YYYY-MM-DD，或 周五、明天、下周一 等相对日期 (date, ISO or relative)
        """
        origin, dest = self._city(departure, "departure"), self._city(destination, "destination")
        day = self._date(date)
        empty = await self._fault("search_flights", day)
        f = self.data.flights
        rows = f[
            (f["from_city"] == origin) & (f["to_city"] == dest) & (f["date"] == day.isoformat())
        ]
        airports = {**self.data.city(origin).airports, **self.data.city(dest).airports}
        flights = [
            {
                "flight_no": r["flight_no"],
                "airline": r["airline"],
                "departure_airport": airports[r["from_airport"]],
                "departure_airport_code": r["from_airport"],
                "arrival_airport": airports[r["to_airport"]],
                "arrival_airport_code": r["to_airport"],
                "departure_time": r["departure_time"],
                "arrival_time": r["arrival_time"],
                "price": int(r["price_cny"]),
                "seats_left": int(r["seats_left"]),
            }
            for r in _records(rows.sort_values("departure_time"))
        ]
        result: dict[str, Any] = {"departure": origin, "destination": dest, **self._day(day)}
        result["flights"] = [] if empty else flights
        if not result["flights"]:
            any_day = ((f["from_city"] == origin) & (f["to_city"] == dest)).any()
            result["note"] = (
                f"no flights found on {day.isoformat()}"
                if any_day
                else f"there are no direct flights between {origin} and {dest} (high-speed rail)"
            )
            result["reason"] = "no_flights_that_day" if any_day else "no_direct_flights"
        return self._hinted(result, "search_flights")

    async def search_weather(self, city: str, date: str) -> dict[str, Any]:
        """查询城市在某天的天气（天气状况、最低/最高气温、降水概率）。

        Weather for a city on a date.

        Args:
            city: 城市名，如 北京 (city name)
            date: 日期，YYYY-MM-DD，或 周五、明天 等相对日期 (date, ISO or relative)
        """
        name, day = self._city(city, "city"), self._date(date)
        empty = await self._fault("search_weather", day)
        w = self.data.weather
        row = w[(w["city"] == name) & (w["date"] == day.isoformat())]
        if empty or row.empty:
            return {"city": name, **self._day(day), "weather": None, "note": "no weather data",
                    "reason": "no_weather_data"}  # fmt: skip
        r = row.iloc[0]
        temps = {k: int(r[k]) for k in ("temp_min_c", "temp_max_c")}
        found = {"condition": r["condition"], "condition_en": r["condition_en"], **temps}
        result = {"city": name, **self._day(day), **found, "precip_prob": float(r["precip_prob"])}
        return self._hinted(result, "search_weather")

    async def search_hotels(
        self,
        city: str,
        check_in_date: str,
        nights: Annotated[int, Field(ge=1, le=14)] = 1,
        near: str | None = None,
    ) -> dict[str, Any]:
        """查询城市可预订的酒店及价格（按晚价从低到高；给出 near 时按离地标的距离排序）。

        Hotels with rooms for every night of the stay.

        Args:
            city: 城市名，如 北京 (city name)
            check_in_date: 入住日期，YYYY-MM-DD，或 周六 等相对日期 (check-in date)
            nights: 住几晚，默认 1 (number of nights)
            near: 可选，地标或区域，如 西湖、国贸 (optional landmark or district)
        """
        name, day = self._city(city, "city"), self._date(check_in_date, "check_in_date")
        empty = await self._fault("search_hotels", day)
        nights_dates = [(day + timedelta(i)).isoformat() for i in range(nights)]
        if nights_dates[-1] > self.data.last_day.isoformat():
            raise ToolError(
                f"the stay runs past {self.data.last_day}, the end of the data",
                hint="ask for fewer nights",
                data={"code": "stay_out_of_range", "last_day": self.data.last_day.isoformat()},
            )
        hotels = self.data.hotels[self.data.hotels["city"] == name]
        note = reason = None
        if near:
            key = near.strip().lower()
            cols = ["landmark", "district", "landmark_en", "name"]
            mask = (
                hotels[cols]
                .apply(lambda c: c.str.lower().str.contains(key, regex=False))
                .any(axis=1)
            )
            if mask.any():
                hotels = hotels[mask]
            else:
                note = f"no hotel is listed near {near!r}; showing all hotels in {name}"
                reason = "nothing_near"
        a = self.data.availability
        nightly = a[a["hotel_id"].isin(hotels["hotel_id"]) & a["date"].isin(nights_dates)]
        found, full = [], 0
        for h in _records(hotels):
            rows = nightly[nightly["hotel_id"] == h["hotel_id"]]
            if len(rows) < nights or (rows["rooms_left"] <= 0).any():
                full += 1
                continue
            total = int(rows["price_cny"].sum())
            found.append(
                {
                    "name": h["name"],
                    "name_en": h["name_en"],
                    "district": h["district"],
                    "landmark": h["landmark"],
                    "distance_km": float(h["distance_km"]),
                    "rating": float(h["rating"]),
                    "price_per_night": round(total / nights),
                    "total_price": total,
                    "rooms_left": int(rows["rooms_left"].min()),
                }
            )
            if nights > 1:  # each night's price, in order (Friday and Saturday cost more)
                found[-1]["nightly_prices"] = [
                    int(p) for p in rows.sort_values("date")["price_cny"]
                ]
        key_fn = (
            (lambda x: x["distance_km"])
            if near and note is None
            else (lambda x: x["price_per_night"])
        )
        found.sort(key=key_fn)
        result: dict[str, Any] = {"city": name, "check_in": day.isoformat(), "nights": nights}
        result["weekday"] = self._day(day)["weekday"]
        result["hotels"] = [] if empty else found
        if full:
            result["fully_booked"] = full
        if note:
            result["note"], result["reason"] = note, reason
        if not result["hotels"] and not note:
            result["note"] = "no hotel has rooms for these nights"
            result["reason"] = "no_rooms"
        return self._hinted(result, "search_hotels")

    async def calculate_cost(
        self, items: list[CostItem], budget: float | None = None
    ) -> dict[str, Any]:
        """计算一组费用明细的总价（人民币元）；给出 budget 时说明是否在预算内。

        Add up expense items (CNY) and compare with an optional budget.

        Args:
            items: 费用明细，每项含 label、unit_price、quantity (expense items)
            budget: 可选，预算上限，人民币元 (optional budget in CNY)
        """
        await self._fault("calculate_cost")
        subtotals = [round(i.unit_price * i.quantity, 2) for i in items]
        lines = [
            {"label": i.label, "unit_price": i.unit_price, "quantity": i.quantity, "subtotal": s}
            for i, s in zip(items, subtotals, strict=True)
        ]
        total = round(sum(subtotals), 2)
        result: dict[str, Any] = {"items": lines, "total": total, "currency": "CNY"}
        if budget is not None:
            result.update(
                budget=budget, within_budget=total <= budget, remaining=round(budget - total, 2)
            )
        return result
