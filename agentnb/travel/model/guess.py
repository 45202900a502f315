"""misbehave='guess_args': the stand-in fills what the user left out and says nothing.

Article 001 §6.1's pitfall on purpose: instead of asking 「哪个城市？」 it takes the first city of
the data, the other one, today; a request that names no need at all (帮我看看, Hello) is guessed
whole, a trip's flights, weather and hotel. What it guessed is said in its reasoning, never to
the user.
"""

from __future__ import annotations

from .explain import Reasoning
from .intent import TripRequest
from .slips import MISBEHAVIOURS

__all__ = ["guess"]


def guess(req: TripRequest, cities: list[str], why: Reasoning) -> None:
    """Fill ``req``'s missing cities, date and (when it names none) needs with guesses from
    ``cities``, in place, and note what was guessed in ``why``."""
    whole = "航班、天气、酒店" if req.language == "zh" else "flights, weather, hotel"
    guessed = [] if req.wants else [whole]
    req.wants = req.wants or ["flights", "weather", "hotels"]
    if not {"flights", "hotels", "weather"} & set(req.wants):
        return
    if "flights" in req.wants and not req.origin:
        req.origin = next(c for c in cities if c != req.destination)
        guessed.append(req.origin)
    if not req.destination:
        req.destination = next(c for c in cities if c != req.origin)
        guessed.append(req.destination)
    if not req.date:
        req.date = "今天" if req.language == "zh" else "today"
        guessed.append(req.date)
    req.vague = None
    if guessed:
        why.add("misbehave_guess_args", "r_misbehave", mode="guess_args",
                what=MISBEHAVIOURS["guess_args"] + f": {', '.join(guessed)}")  # fmt: skip
