"""The itinerary: the travel assistant's answer as data (``Agent(output_type=Itinerary)``).

Article 002 §5.3: the same schema parses today and fails tomorrow (a model update, a higher
temperature); the first remedy is the provider's structured-output capability, the second
the parse error sent back to the model. Notebook 21 runs both on this type.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["Flight", "Hotel", "Itinerary"]


class Flight(BaseModel):
    """The recommended flight."""

    flight_no: str
    airline: str
    departure_time: str = Field(description="HH:MM")
    arrival_time: str = Field(description="HH:MM")
    price: int = Field(description="the fare in CNY")


class Hotel(BaseModel):
    """The recommended hotel."""

    name: str
    price_per_night: int
    nights: int


class Itinerary(BaseModel):
    """A trip plan: the flight, the hotel and what they cost in total."""

    origin: str
    destination: str
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")
    flight: Flight | None
    hotel: Hotel | None
    total: int = Field(description="flight + hotel in CNY")
    within_budget: bool | None
    currency: str = "CNY"
