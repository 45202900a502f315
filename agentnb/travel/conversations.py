# ruff: noqa: E501  (the users' Chinese and English side by side)
"""The travel assistant's conversations: ``an.travel.conversation_tasks()``.

13 tasks in Chinese and English, each a conversation with a rule-based :class:`~agentnb.User`
built on the articles' requests: the six ambiguous requests of the task set (``which-city`` ...
``hello-en``), completed through the user's answers; the article's own request booked (in
Chinese and English, and for two nights); a budget changed mid-conversation; a user who
corrects a wrong date; one who gives up on an agent that cannot help; one whose first message
is vague and who gives a detail only when asked. Each run gets a booking desk of its own
(``tools=booking_desk``: the four tools and ``book_hotel``), so the end state is checked: a
booking with the right hotel, dates and price within budget, or none when the user only
asked. The reference date is Monday 2025-01-06.

    tasks = an.travel.conversation_tasks()                  # all 13
    an.travel.conversation_tasks(tags=["ambiguous"])        # the six
    ev = await an.evaluate({"article": an.travel.travel_agent(),
                            "no_clarification": an.travel.no_clarification_agent()}, tasks)
    ev.compare("article", "no_clarification")               # the exact test over tasks
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..agent import Agent
from ..evals import checks
from ..evals.conversation import Conversation
from ..evals.tasks import Task, TaskSet
from ..evals.user import User
from .agent import travel_agent
from .booking import BookingDesk, booking_desk
from .model import TravelModel

__all__ = [
    "CONVERSATION_TAGS",
    "USER_PARAMS",
    "booked_beijing_friday",
    "booked_beijing_two_nights",
    "conversation_tasks",
    "no_clarification_agent",
    "nothing_booked",
    "smollm2_user",
]

#: The topics of a conversation task (besides its language, ``zh`` or ``en``).
CONVERSATION_TAGS = ("ambiguous", "booking", "budget_change", "correction", "gives_up", "slips")


# -- end states ------------------------------------------------------------------------------
def nothing_booked(desk: BookingDesk) -> bool | str:
    """The user only asked: nothing was booked."""
    made = ", ".join(f"{b.hotel} {b.check_in}" for b in desk.bookings)
    return "" if not desk.bookings else f"booked {made}, though the user never asked to book"


def _booking(desk: BookingDesk, hotel: str, check_in: str, nights: int, budget: int) -> str:
    if not desk.bookings:
        return "nothing was booked"
    if len(desk.bookings) > 1:
        return f"{len(desk.bookings)} bookings: {desk.bookings}"
    b = desk.bookings[0]
    wrong = [f"{what} {got!r} (not {want!r})" for what, got, want in
             (("hotel", b.hotel, hotel), ("check-in", b.check_in, check_in), ("nights", b.nights, nights))
             if got != want]  # fmt: skip
    if b.total_price > budget:
        wrong.append(f"total {b.total_price} over the budget {budget}")
    return "; ".join(wrong)


def booked_beijing_friday(desk: BookingDesk) -> bool | str:
    """One booking: 全季酒店(北京国贸店), check-in Friday 2025-01-10, one night, within 3000."""
    return _booking(desk, "全季酒店(北京国贸店)", "2025-01-10", 1, 3000)


def booked_beijing_two_nights(desk: BookingDesk) -> bool | str:
    """One booking: 全季酒店(北京国贸店), from Friday 2025-01-10, two nights, within 3000."""
    return _booking(desk, "全季酒店(北京国贸店)", "2025-01-10", 2, 3000)


# -- the tasks -------------------------------------------------------------------------------
FRIDAY_ZH, FRIDAY_EN = ["周五", "2025-01-10", "1月10日"], ["Friday", "2025-01-10", "January 10"]
_WEATHER, _FLIGHT, _HOTEL = ["°C"], ["起飞", "departs"], ["元/晚", "CNY/night"]


def _tasks() -> list[Task]:
    lookup = checks.end_state(nothing_booked)
    asked = checks.goal_reached()
    return [
        Task("talk-which-city", "明天会下雨吗？",
             [asked, checks.asked_for("city"), checks.calls("search_weather", city="北京", over="conversation"), lookup],
             tags=["ambiguous", "zh"],
             user=User("北京明天会不会下雨", {"city": "北京"}, wants=[_WEATHER])),
        Task("talk-which-day", "下个月去北京出差",
             [asked, checks.asked_for("date"),
              checks.calls("search_hotels", city="北京", check_in_date=["1月20日", "2025-01-20"], over="conversation"), lookup],
             tags=["ambiguous", "zh"],
             user=User("1月20日去北京出差，看看天气和酒店", {"date": ["1月20日", "2025-01-20"]}, wants=[_HOTEL])),
        Task("talk-which-day-flight", "上海到北京的航班",
             [asked, checks.asked_for("date"),
              checks.calls("search_flights", departure="上海", destination="北京", date=FRIDAY_ZH, over="conversation"), lookup],
             tags=["ambiguous", "zh"],
             user=User("周五上海到北京的航班", {"date": FRIDAY_ZH}, wants=[_FLIGHT])),
        Task("talk-which-day-en", "Flights from Shanghai to Beijing",
             [asked, checks.asked_for("date"),
              checks.calls("search_flights", departure="Shanghai", destination="Beijing", date=FRIDAY_EN, over="conversation"), lookup],
             tags=["ambiguous", "en"],
             user=User("Flights from Shanghai to Beijing on Friday", {"date": FRIDAY_EN}, wants=[_FLIGHT])),
        Task("talk-vague-help", "帮我看看",
             [asked, checks.asked_for("date"),
              checks.calls("search_flights", departure="上海", destination="北京", date=FRIDAY_ZH, over="conversation"), lookup],
             tags=["ambiguous", "zh"],
             user=User("周五从上海去北京的航班", {"origin": "上海", "destination": "北京", "date": FRIDAY_ZH}, wants=[_FLIGHT])),
        Task("talk-hello-en", "Hello",
             [asked, checks.asked_for("city"),
              checks.calls("search_weather", city=["Beijing", "北京"], date=FRIDAY_EN, over="conversation"), lookup],
             tags=["ambiguous", "en"],
             user=User("The weather in Beijing on Friday", {"city": "Beijing", "date": FRIDAY_EN}, wants=[_WEATHER])),
        Task("talk-book-000", "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。",
             [checks.goal_reached(booked_beijing_friday), asked, checks.turns(max=2), checks.grounded(over="conversation")],
             tags=["booking", "zh"],
             user=User("周五去北京出差，订好3000以内的酒店", {"budget": "3000"}, wants=[["预订成功", "Booked"]])),
        Task("talk-book-000-en", "I'm flying from Shanghai to Beijing this Friday for work. Please check flights, the weather and book a hotel; my budget is 3000 CNY.",
             [checks.goal_reached(booked_beijing_friday), asked, checks.turns(max=2), checks.grounded(over="conversation")],
             tags=["booking", "en"],
             user=User("A hotel booked in Beijing for this Friday, within 3000 CNY", {"budget": "3000"}, wants=[["Booked", "预订成功"]])),
        Task("talk-book-two-nights", "周五从上海去北京出差，住两晚，帮我订个酒店",
             [checks.goal_reached(booked_beijing_two_nights), asked, checks.calls("book_hotel", nights=2, over="conversation")],
             tags=["booking", "zh"],
             user=User("周五去北京，订两晚酒店", {"nights": "两晚"}, wants=[["预订成功", "Booked"]])),
        Task("talk-budget-change", "我周五从上海去北京出差，帮我看看航班和酒店，预算3000",
             [asked, checks.answer_contains("1300"), checks.calls("calculate_cost", budget=1300, over="conversation"), lookup],
             tags=["budget_change", "zh"],
             user=User("周五去北京出差的航班和酒店，预算以最新说的为准", {"budget": "3000"}, wants=[["预算"]],
                       changes={1: {"budget": "1300"}})),
        Task("talk-correct-date", "Flights from Shanghai to Beijing next Friday, please.",
             [asked, checks.answer_contains("2025-01-10"),
              checks.calls("search_flights", date=["this Friday", "2025-01-10"], over="conversation"), lookup],
             tags=["correction", "en"],
             user=User("A flight from Shanghai to Beijing this Friday, January 10",
                       {"date": ["this Friday", "2025-01-10", "January 10"]}, wants=[_FLIGHT])),
        Task("talk-gives-up", "周五从上海飞杭州的航班",
             [checks.stops_with("user_gave_up", over="conversation"), checks.grounded(over="conversation"),
              checks.no_call("book_hotel", over="conversation")],
             tags=["gives_up", "zh"],
             user=User("周五坐飞机从上海去杭州", {}, wants=[_FLIGHT], patience=2)),
        Task("talk-vague-first-en", "I'm flying from Shanghai to Beijing on Friday. Please find me a flight.",
             [asked, checks.asked_for("date"), checks.never_asked_twice(), checks.turns(max=4), lookup],
             tags=["slips", "en"],
             user=User("A flight from Shanghai to Beijing on Friday",
                       {"origin": "Shanghai", "destination": "Beijing", "date": FRIDAY_EN},
                       wants=[_FLIGHT], vague_first=1.0, only_when_asked=1.0)),
    ]  # fmt: skip


def conversation_tasks(*, tags: Iterable[str] = (), language: str | None = None) -> TaskSet:
    """The travel conversation tasks (see the module docstring); ``tags`` keeps those
    carrying every tag, ``language`` "zh" or "en". Each gets a booking desk per run."""
    tasks = [t.model_copy(update={"tools": booking_desk}) for t in _tasks()]
    need = set(tags) | ({language} if language else set())
    return TaskSet(tasks, name="travel-conversations").select(tags=need)


def no_clarification_agent(**options: Any) -> Agent:
    """The article's travel assistant with a model that never asks a clarifying question: it
    guesses what the user left out (``TravelModel(misbehave="guess_args")``: the first city of
    the data, the other, today; a request that names no need is guessed whole)."""
    return travel_agent(model=TravelModel(misbehave="guess_args"), **options)


#: The user model's settings of the SmolLM2 recording (``server.model("smollm2", params=...)``);
#: each turn also sends a seed derived from the user's (``agentnb.evals.user.played``).
USER_PARAMS: dict[str, Any] = {"temperature": 0.8, "max_tokens": 40}


def smollm2_user(model: Any, seed: int = 0) -> Conversation:
    """Notebook 17's conversation with a model playing the user: ``talk-which-day-en``'s user
    (its goal, facts and wants) played by ``model`` with ``seed``, at most 3 turns, against
    the English travel assistant on the stand-in. ``data/cassettes/user_smollm2.jsonl``
    recorded SmolLM2 in it (``tests/servers/record_cassettes.py users``: seeds 0, 0 and 1)."""
    task = conversation_tasks()["talk-which-day-en"]
    assert task.user is not None
    user = User(task.user.goal, task.user.facts, wants=task.user.wants, model=model, seed=seed,
                max_turns=3)  # fmt: skip
    return Conversation(travel_agent(language="en"), user, task.input)
