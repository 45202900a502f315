"""Checks for evaluation tasks: declarative, serialisable, each with its reason.

    an.checks.calls("search_weather", city=["北京", "Beijing"])
    an.checks.sequence(["search_flights", "search_weather"], order="in_order")
    an.checks.same_batch("search_weather", "search_hotels")   # called in one reply
    an.checks.grounded()                                     # no invented numbers
    an.checks.end_state(lambda desk: desk.booked)            # the state after the run
    an.checks.answer_and_state(fn)                           # fn(answer, state): both at once
    an.checks.ungrounded_figures(session)                    # the figures no source holds
    an.checks.goal_reached(); an.checks.turns(max=3)         # a conversation (a task's user)
    an.checks.asked_for("city"); an.checks.never_asked_twice()
    an.checks.calls("book_hotel", over="conversation")       # any check, over every turn
    an.checks.human()                                        # a person's label on the run
    an.checks.not_steered()                                  # no value only from an injection
    an.checks.provenance("search_hotels", "city", from_="user")   # where a value came from
    an.checks.output_valid()                                 # structured output passed its type

A plain function ``fn(result) -> bool | str`` is a check too (a string is the reason it
failed). Every check's outcome is recorded per run as ``(name, passed, reason)``. In a
conversation every check reads the last turn unless told ``over="conversation"``.
"""

from .answers import answer_contains, answer_matches, grounded
from .base import Check, CheckResult, Evidence, FunctionCheck, as_check, check_from_dict
from .calls import calls, no_call, same_batch, sequence
from .conversation import asked_for, goal_reached, never_asked_twice, over, turns
from .grounding import ungrounded_answer, ungrounded_figures
from .human import human
from .judge import judge
from .outcome import answer_and_state, end_state, max_steps, no_tool_errors, stops_with
from .output import output_valid
from .sourcing import not_steered, provenance

__all__ = [
    "Check",
    "CheckResult",
    "Evidence",
    "FunctionCheck",
    "answer_and_state",
    "answer_contains",
    "answer_matches",
    "as_check",
    "asked_for",
    "calls",
    "check_from_dict",
    "end_state",
    "goal_reached",
    "grounded",
    "human",
    "judge",
    "max_steps",
    "never_asked_twice",
    "no_call",
    "no_tool_errors",
    "not_steered",
    "output_valid",
    "over",
    "provenance",
    "same_batch",
    "sequence",
    "stops_with",
    "turns",
    "ungrounded_answer",
    "ungrounded_figures",
]
