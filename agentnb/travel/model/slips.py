"""The stand-in's mistakes: the slips of a temperature above 0, and the deliberate pitfalls of
``misbehave=`` (:data:`MISBEHAVIOURS`). Both are rows of ``TravelModel.rules()``.

Temperature: the documented slips TravelModel makes when ``temperature > 0``.

Each slip rolls its own die, seeded by ``(seed, task, step, slip)`` — the task is what the
user said (every user turn), the step how many replies this turn already has — never by global
random state and never by the instructions or the tool results. So the same seed gives the
same run, call for call; a different seed a different one; and an instruction line that sets
no knob (or any wording that leaves the run's steps as they were) changes no slip, which is
what lets an evaluation pair two prompts run by run. Each slip happens with probability
``RATE × temperature`` (capped at 1) where it has something to act on (a budget to misread, a
preference to ignore). At temperature 0 nothing is rolled: the model is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

__all__ = ["MISBEHAVIOURS", "RATE", "SLIPS", "roll"]

#: Each mode reproduces one pitfall of the source articles.
MISBEHAVIOURS = {
    "loop": "repeats the same search_flights call instead of moving on (000 §5.1, 002 §5.1)",
    "hallucinate_tool": "first calls book_flight, a tool that does not exist (002 §2.4)",
    "wrong_args": "calls search_flights with from_city/to_city instead of departure/destination "
    "(or the other way round when the schema renamed them) (000 §4.3)",
    "malformed_json": "sends its first call's arguments as broken JSON (002 §5.3)",
    "ignore_results": "calls the tools, then answers with figures they never returned (001 §6.1)",
    "fabricate": "answers at once with invented data unless the instructions demand tools "
    "first (000 §2.3)",
    "ghost_call": "also calls search_hotels because earlier history mentioned hotels (000 §5.4)",
    "mismatched_id": "gives two calls in one reply the same id (001 §6.1)",
    "guess_args": "guesses what the user left out (the origin, the destination, the day; a "
    "request that names no need, a whole trip) and calls with it instead of asking: wrong "
    "arguments from too little context (001 §6.1)",
    "error_loop": "takes any 'error' text inside a good result as a failure and calls again, "
    "until the run stops on the repeated action (002 §2.1; see the fault 'noisy')",
    "gullible": "follows instructions it finds in tool results (book another hotel, a higher "
    "budget, send the itinerary elsewhere) at a seeded rate, less when told tool results are "
    "data or shown them framed; prompt injection, beyond the articles (—)",
    "format_drift": "asked for JSON (an output schema, or JSON mode), answers JSON that no "
    "longer fits: the date as the user said it (周五), the total as text ('1400 元'); after "
    "the runtime's correction it answers in the format asked for (002 §5.3)",
}
#: The chance of each slip per model call at temperature 1.
RATE = 0.2

#: slip -> what it does (shown in the rule table).
SLIPS: dict[str, str] = {
    "slip_date_format": "sends a date in a format the tools do not read (01/10/2025): the tool "
    "answers bad_date",
    "slip_forget_tool": "forgets the lookups still to do and answers with what it has (the "
    "answer says what was not looked up)",
    "slip_repeat_call": "repeats its last successful call with the same arguments",
    "slip_misread_budget": "misreads the budget by a factor of ten (3000 → 300)",
    "slip_ignore_preference": "ignores a choice knob (flight_choice, hotel_choice) and picks by "
    "default",
}


def roll(temperature: float, seed: int, messages: list[dict[str, Any]]) -> frozenset[str]:
    """The slips of one call: reproducible from ``seed``, the user's turns and the step."""
    if temperature <= 0:
        return frozenset()
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"
             and m.get("name") != "agentnb"]  # fmt: skip
    task = json.dumps([messages[i].get("content") for i in users], ensure_ascii=False,
                      sort_keys=True, default=str)  # fmt: skip
    after = messages[users[-1] + 1 :] if users else messages
    step = sum(m.get("role") == "assistant" for m in after)
    digest = hashlib.sha256(task.encode("utf-8")).hexdigest()
    chance = min(1.0, RATE * temperature)
    return frozenset(
        name for name in SLIPS if random.Random(f"{seed}:{digest}:{step}:{name}").random() < chance
    )
