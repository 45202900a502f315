"""``User.rules()``: every rule the rule-based user follows, as one table.

Each turn it plays names one of these rules (``turn.rule``; several joined by ``+`` when one
answer needed more than one), and ``turn.why`` says which words of the agent's answer made
it apply. The slips (:mod:`.slips`) are rows too.
"""

from __future__ import annotations

from typing import Any

from .slips import SLIPS

__all__ = ["RULES", "rule_table"]

#: rule -> (when it applies, what the user says, whether it costs patience).
RULES: dict[str, tuple[str, str, bool]] = {
    "opening": (
        "the first turn",
        "the task's input as written (or vaguer: the vague_first slip)",
        False,
    ),
    "answer": (
        "the answer asks for a slot the user holds (哪天出发？ which city?)",
        "that fact, in the words of its slot (从上海出发, to Beijing)",
        False,
    ),
    "answer_again": (
        "the answer asks for a fact the user already gave",
        "the fact again; the question is counted in turn.repeated",
        True,
    ),
    "dont_know": (
        "the answer asks for something outside the user's facts",
        '"I don\'t know" (我不知道); the question is listed in turn.unread',
        False,
    ),
    "volunteer": (
        "the user answers or restates, and holds facts it has not given",
        "those facts too, unless only_when_asked keeps one back",
        False,
    ),
    "confirm": (
        "the answer proposes something and asks for a yes (需要我为你预订吗？ shall I "
        "book it?), contradicting no fact",
        "yes (好的，请预订 / Yes, please book it)",
        False,
    ),
    "correct": (
        "the answer contradicts a fact: another calendar day or weekday, a place it "
        "never names, another budget",
        "the fact (不对，日期是周五 / No, the date is Friday)",
        True,
    ),
    "change_mind": (
        "turn k of changes={k: {...}}",
        "the new value (我改主意了：预算改成1300)",
        False,
    ),
    "restate": (
        "the answer asks nothing and lacks what the user wants",
        "its goal again (我要的是：… / What I need is: …)",
        True,
    ),
    "done": (
        "the answer holds what the user wants (its non-question sentences), names every "
        "value it changed its mind to, contradicts no fact, and no change of mind is due",
        "thanks, and the conversation stops: user_done",
        False,
    ),
    "give_up": (
        "a turn that costs patience when none is left",
        "never mind, and the conversation stops: user_gave_up",
        False,
    ),
    "model": (
        "model= is given",
        "what the model says, prompted with the goal, persona and "
        "facts (user.prompt()); ###DONE### / ###GIVE UP### end the conversation",
        False,
    ),
    "person": ("conversation.take_over()", "what a person typed (conversation.say(text))", False),
    "recording": (
        "a replaying agent (agent.replaying(recording))",
        "the recorded turn, to the same answer only: never regenerated",
        False,
    ),
}


def rule_table() -> Any:
    """The rules and slips as a pandas DataFrame (one row each)."""
    import pandas as pd

    rows = [
        {"rule": name, "when": when, "says": says, "costs patience": cost}
        for name, (when, says, cost) in RULES.items()
    ]
    rows += [
        {"rule": name, "when": "a seeded slip (a knob of User)", "says": what,
         "costs patience": False}
        for name, what in SLIPS.items()
    ]  # fmt: skip
    return pd.DataFrame(rows)
