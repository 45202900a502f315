"""A booking desk: the four tools of article 000 and ``book_hotel``, with per-run state.

A conversation ends in the world it changed: a booking made with the right hotel and dates
within budget is what an end-state check reads (τ-bench checks its database the same way).
``BookingDesk`` is :class:`~agentnb.travel.TravelTools` plus one side-effecting tool; each run
gets a desk of its own (``an.Task(..., tools=booking_desk)``), so runs never share bookings::

    desk = BookingDesk()
    agent = an.travel.travel_agent(tools=desk)    # or Task(tools=booking_desk)
    ...
    desk.bookings   # [Booking(hotel='全季酒店(北京国贸店)', check_in='2025-01-10', nights=1, ...)]

A booking is refused (a ``ToolError`` the model reads) for a hotel the city's data does not
list, or with no room on one of the nights; the same booking asked twice is made once (its
idempotency key: hotel, check-in, nights).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from ..tools.tool import Tool, ToolError
from .tools import TravelTools

__all__ = ["Booking", "BookingDesk", "booking_desk"]


@dataclass(frozen=True)
class Booking:
    """One booking the desk made."""

    booking_id: str
    hotel: str
    city: str
    check_in: str
    nights: int
    total_price: int


class BookingDesk(TravelTools):
    """The travel tools and ``book_hotel``; ``bookings`` is the end state."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bookings: list[Booking] = []
        self.tools = [*self.tools, Tool(self.book_hotel, timeout=self.timeout, side_effects=True)]

    async def book_hotel(
        self,
        hotel: str,
        check_in_date: str,
        nights: Annotated[int, Field(ge=1, le=14)] = 1,
    ) -> dict[str, Any]:
        """预订酒店：按酒店名称、入住日期和晚数下单，返回订单号和总价。只在用户确认要预订后调用。

        Book a hotel room for the nights given; returns the booking id and the total.

        Args:
            hotel: 酒店名称，与 search_hotels 返回的 name 一致 (the hotel's name)
            check_in_date: 入住日期，YYYY-MM-DD，或 周五 等相对日期 (check-in date)
            nights: 住几晚，默认 1 (number of nights)
        """
        day = self._date(check_in_date, "check_in_date")
        hotels = self.data.hotels
        row = hotels[(hotels["name"] == hotel) | (hotels["name_en"] == hotel)]
        if row.empty:
            raise ToolError(
                f"no hotel named {hotel!r} (预订失败：没有这家酒店)",
                hint="book a hotel by the exact name search_hotels returned",
                data={"code": "unknown_hotel", "hotel": hotel},
            )
        found = row.iloc[0]
        dates = [(day + timedelta(i)).isoformat() for i in range(nights)]
        a = self.data.availability
        nightly = a[(a["hotel_id"] == found["hotel_id"]) & a["date"].isin(dates)]
        if len(nightly) < nights or (nightly["rooms_left"] <= 0).any():
            raise ToolError(
                f"{found['name']} has no room for every night from {day.isoformat()}",
                hint="search again and offer the user another hotel or date",
                data={"code": "no_rooms", "hotel": str(found["name"])},
            )
        total = int(nightly["price_cny"].sum())
        same = [b for b in self.bookings if (b.hotel, b.check_in, b.nights)
                == (str(found["name"]), day.isoformat(), nights)]  # fmt: skip
        booking = same[0] if same else Booking(
            f"BK{len(self.bookings) + 1:04d}", str(found["name"]), str(found["city"]),
            day.isoformat(), nights, total,
        )  # fmt: skip
        if not same:
            self.bookings.append(booking)
        return {**asdict(booking), "status": "confirmed"}


def booking_desk() -> tuple[list[Tool], BookingDesk]:
    """A fresh desk for one run: its tools and the desk (what end-state checks read); the
    ``tools=`` factory of the travel conversation tasks."""
    desk = BookingDesk()
    return list(desk.tools), desk
