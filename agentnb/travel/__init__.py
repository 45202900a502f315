"""The travel assistant of the source articles: data, four tools, an embedded model.

    import agentnb as an
    agent = an.travel.travel_agent()              # offline, deterministic
    result = await agent.run(an.travel.ARTICLE_REQUESTS["000"])  # 我周五从上海去北京出差…

The embedded model (``travel/model/``) is a stand-in (no LLM) that reads only its request, then
plans and writes: its instructions and tool descriptions become policy knobs through a cue
lexicon (``TravelModel().understood(agent)`` shows them, with the line that set each and the
lines it did not understand), the tool schemas say which tool does what, the user's words give
the trip. Each reply's ``reasoning_content`` names the rules it followed (``TravelModel.rules()``
lists every rule with its article section); ``TravelModel(temperature=1.0, seed=3)`` makes the
documented slips, reproducibly. ``travel_agent(schemas="article")`` offers article 000's own
schemas (ISO dates, no ``nights``: "住两晚" gives the article's 880 + 520 × 2 = 1920).

``conversation_tasks()`` are 13 conversations with a simulated user (``an.User``) on a booking
desk (``BookingDesk``: the four tools and ``book_hotel``); ``no_clarification_agent()`` never
asks. ``TravelModel(misbehave=...)`` reproduces the articles' pitfalls; ``TravelTools`` can inject
faults (timeout, upstream_error, rate_limit, empty) into any tool, on every day or one.
``travel_agent(output_type=an.travel.Itinerary)`` answers an :class:`Itinerary` as JSON, in
``result.value`` (the stand-in fills any schema it is sent from what it found out).
"""

from ..testing import ungrounded_figures as ungrounded_claims
from .agent import INSTRUCTIONS, INSTRUCTIONS_EN, travel_agent
from .booking import Booking, BookingDesk, booking_desk
from .conversations import conversation_tasks, no_clarification_agent
from .data import TravelData, data_dir, load, phrasings
from .dates import DEFAULT_TODAY, resolve_date
from .injection import InjectedTravelTools, injection_tasks
from .itinerary import Flight, Hotel, Itinerary
from .lookalike import DESCRIPTIONS, description_tasks, lookalike_tools
from .model import MISBEHAVIOURS, TravelModel
from .model.proposer import TravelProposer
from .tasks import task_set
from .tools import FAULTS, CostItem, TravelTools, UpstreamError

#: The requests of the source articles, ready to paste into a run.
ARTICLE_REQUESTS = {
    "000": "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。",
    "001": "我想周末去杭州玩，帮我查一下周六西湖附近的酒店，并看看周六的天气怎么样。",
    "en": "I'm flying from Shanghai to Beijing this Friday for work. Please check flights, the "
    "weather and a hotel; my budget is 3000 CNY.",
}

__all__ = [
    "ARTICLE_REQUESTS",
    "DEFAULT_TODAY",
    "DESCRIPTIONS",
    "FAULTS",
    "INSTRUCTIONS",
    "INSTRUCTIONS_EN",
    "MISBEHAVIOURS",
    "Booking",
    "BookingDesk",
    "CostItem",
    "Flight",
    "Hotel",
    "InjectedTravelTools",
    "Itinerary",
    "TravelData",
    "TravelModel",
    "TravelProposer",
    "TravelTools",
    "UpstreamError",
    "booking_desk",
    "conversation_tasks",
    "data_dir",
    "description_tasks",
    "injection_tasks",
    "load",
    "lookalike_tools",
    "no_clarification_agent",
    "phrasings",
    "resolve_date",
    "task_set",
    "travel_agent",
    "ungrounded_claims",
]
