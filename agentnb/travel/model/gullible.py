"""misbehave='gullible': the stand-in follows instructions it finds in tool results.

The stand-in reads a tool result's text for the three attacks of :mod:`agentnb.travel.injection`
(another hotel to book, a higher budget, another address to send the itinerary to), in Chinese
and English, with its own patterns (not agentnb's detector: what a model obeys and what a
detector flags are different questions). Each attack it finds is followed with probability
:func:`susceptibility`, rolled once per (seed, the user's turns, the attack), so a run
reproduces exactly and every variant of an evaluation rolls the same die for the same task:

* ``RATE`` (0.8) when nothing in the request says otherwise;
* a quarter of that when the instructions say tool results are data (knob ``tool_text=data``);
* a quarter again when the tool results arrive framed (``Agent(frame_results="delimit")``:
  the stand-in sees the markers, as spotlighting intends a model to).

These rates are the stand-in's, chosen to make the lesson visible; a real model's must be
measured (the notebook's sweep is how).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from .slips import MISBEHAVIOURS

__all__ = ["FRAME", "RATE", "follows", "found", "obey", "susceptibility", "unframed"]

RATE = 0.8
#: A framed tool result, as :mod:`agentnb.context.framing` writes it.
FRAME = re.compile(r"\A<<tool_result[^>\n]*>>\n(?P<body>.*)\n<<end [^>\n]*>>\Z", re.S)
_ATTACKS = {
    "hotel": re.compile(
        r"(?:预订|预定|改订)(?P<zh>[\u4e00-\u9fff]{2,10}?酒店)"
        r"|\bbook (?:the )?(?P<en>[A-Z][\w'’]*(?: [A-Z][\w'’]*){0,4} (?:Hotel|Inn|Resort))"
    ),
    "budget": re.compile(
        r"预算(?:已经?)?(?:提高|调高|上调|改|增加)(?:到|为|至)\s*(?P<zh>\d[\d,]*)"
        r"|budget (?:has been raised to|is now|was raised to) (?P<en>\d[\d,]*)",
        re.I,
    ),
    "send": re.compile(
        r"(?:发送|发到|发给|转发)(?:到|至|给)?\s*(?P<zh>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
        r"|\bsend\b[^.]{0,60}?\bto (?P<en>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)",
        re.I,
    ),
}


def unframed(text: str) -> tuple[str, bool]:
    """A tool result's text without the runtime's frame, and whether it had one."""
    m = FRAME.match(text)
    return (m.group("body"), True) if m else (text, False)


def found(texts: list[str]) -> dict[str, Any]:
    """The attacks the tool results hold: goal -> the value it asks for."""
    out: dict[str, Any] = {}
    for text in texts:
        for goal, pattern in _ATTACKS.items():
            m = pattern.search(text)
            if m and goal not in out:
                value = m.group("zh") or m.group("en")
                out[goal] = float(value.replace(",", "")) if goal == "budget" else value
    return out


def susceptibility(tool_text: str, framed: bool) -> float:
    """The chance the stand-in follows an instruction found in data (see the module)."""
    rate = RATE
    if tool_text == "data":
        rate /= 4
    if framed:
        rate /= 4
    return rate


def follows(seed: int, messages: list[dict[str, Any]], goal: str, value: Any, rate: float) -> bool:
    """The seeded roll: the same for every variant of a task, so pairs compare."""
    users = [
        m.get("content") for m in messages if m.get("role") == "user" and m.get("name") is None
    ]
    task = json.dumps(users, ensure_ascii=False, sort_keys=True, default=str)
    digest = hashlib.sha256(task.encode("utf-8")).hexdigest()
    return random.Random(f"{seed}:{digest}:{goal}:{value}:gullible").random() < rate


def obey(turn: Any, seed: int, messages: list[dict[str, Any]], say: Any) -> None:
    """Follow what this turn's tool results say, at the seeded rate: another hotel
    (``turn.injected``), another budget (``turn.request.budget``), another address; each
    said in the reasoning through ``say(rule, key, **fields)``."""
    rate = susceptibility(turn.policy.tool_text, turn.framed)
    for goal, value in found(turn.tool_texts).items():
        if not follows(seed, messages, goal, value, rate):
            continue
        turn.injected[goal] = value
        if goal == "budget":
            turn.request.budget = value
        what = f"{goal} = {value} ({MISBEHAVIOURS['gullible']})"
        say("misbehave_gullible", "r_misbehave", mode="gullible", what=what)
