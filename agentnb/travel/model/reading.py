"""read: what TravelModel takes from a request, and nothing else.

The instructions and tool descriptions become policy knobs (:mod:`.lexicon`); the tool schemas
a menu of roles and parameter names (:mod:`.schemas`); the user's words, earlier turns and the
marked memory messages the slots of a trip (:mod:`.intent`); this turn's tool results
observations (:mod:`.observations`); ``request.params`` the parallel-calls default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date as Date
from typing import Any

from ...messages import MEMORY_NAME, RUNTIME_NAME, SUMMARY_NAME, content_text
from ...models.base import ModelRequest
from ..data import TravelData
from .gullible import unframed
from .intent import TripRequest, parse_request
from .knobs import Policy
from .lexicon import read_policy
from .observations import Observation
from .schemas import Menu, read_menu

__all__ = ["CORRECTION", "Turn", "from_runtime", "read", "text_of"]

#: How the runtime's correction of an invalid final answer starts
#: (``agentnb.runtime.decide.output_correction``).
CORRECTION = "Your answer was not valid because "

#: The user's own words that ask for the cheap option (hotel/flight_choice=cheapest_if_asked).
CHEAP_WORDS = re.compile(
    r"便宜|实惠|省钱|划算|低价|经济|不贵|别太贵|不要太贵|cheap|budget|affordable|inexpensive|"
    r"won'?t cost (?:much|a lot)|not (?:too |very )?expensive|low[- ]cost|budget-friendly",
    re.I,
)


@dataclass
class Turn:
    """What the model read from one request."""

    request: TripRequest
    observations: list[Observation]
    policy: Policy
    menu: Menu
    parallel: bool
    calls_so_far: int
    today: Date
    missing: list[str] = field(default_factory=list)  # wanted roles with no tool offered
    asks_cheap: bool = False  # the user said 便宜/cheap or gave a budget
    misread_budget: float | None = None  # slip_misread_budget: the budget the user gave
    framed: bool = False  # the tool results came framed (Agent(frame_results=...))
    #: misbehave='gullible': what it was told in data and follows (goal -> value)
    injected: dict[str, Any] = field(default_factory=dict)
    tool_texts: list[str] = field(default_factory=list)  # this turn's tool results, as text
    #: The user asks to book now ("asked": 订, book) or says yes to its booking question
    #: ("confirmed"); "" when neither (rule book).
    book: str = ""

    @property
    def flight_choice(self) -> str:
        return self._choice(self.policy.flight_choice, "earliest")

    @property
    def hotel_choice(self) -> str:
        return self._choice(self.policy.hotel_choice, "value")

    def _choice(self, how: str, default: str) -> str:
        if how == "cheapest_if_asked":
            return "cheapest" if self.asks_cheap else default
        return how


def read(request: ModelRequest, data: TravelData, *, today: Date,
         parallel: bool | None = None, ghost: bool = False) -> Turn:  # fmt: skip
    """Read ``request``. ``ghost`` (misbehave='ghost_call'): earlier hotel talk leaks in."""
    messages = request.messages
    users = [i for i, m in enumerate(messages)
             if m.get("role") == "user" and not from_runtime(m)]  # fmt: skip
    last = users[-1] if users else -1
    texts = [text_of(messages[i]) for i in users]
    parsed = [parse_request(t, data) for t in texts] or [parse_request("", data)]
    # Carried facts and recalled memory: the oldest earlier turns, for slots only (002 §2.2)
    noted = [replace(parse_request(t, data), wants=[], compare=False)
             for t in _memory_notes(messages)]  # fmt: skip
    current = parsed[-1].filled_from(noted + parsed[:-1])
    instructions = [m for m in messages if m.get("role") in ("system", "developer")]
    system = "\n".join(text_of(m) for m in instructions if m.get("name") != MEMORY_NAME)
    tools = [t for t in request.tools or () if isinstance(t, dict)]
    policy = read_policy(system, tools)
    menu = read_menu(tools)
    mentioned_hotels = any("hotels" in p.wants for p in parsed[:-1])
    leak = ghost and policy.focus != "latest"  # the current-task line stops it (000 §5.4)
    if leak and mentioned_hotels and current.destination and "hotels" not in current.wants:
        current.wants.append("hotels")  # the history leaks into this turn
    roles = {spec.name: role for role, spec in menu.specs.items()}
    calls: dict[str, tuple[str, Any]] = {}
    observations: list[Observation] = []
    tool_texts: list[str] = []
    framed = False
    n_calls = sum(len(m.get("tool_calls") or ()) for m in messages)
    for m in messages[last + 1 :]:
        for c in m.get("tool_calls") or ():
            function = (c.get("function") or {}) if isinstance(c, dict) else {}
            calls[str(c.get("id"))] = (str(function.get("name") or "?"),
                                       function.get("arguments"))  # fmt: skip
        if m.get("role") == "tool":
            name, raw = calls.get(str(m.get("tool_call_id")), (m.get("name") or "?", ""))
            text, was_framed = unframed(text_of(m))  # Agent(frame_results=...): the markers off
            framed = framed or was_framed
            tool_texts.append(text)
            observations.append(Observation.read(name, raw, text, roles.get(name)))
    if parallel is None:
        parallel = {"parallel": True, "serial": False}.get(
            policy.calls, bool(request.params.get("parallel_tool_calls"))
        )
    day = Date.fromisoformat(policy.today) if policy.today != "model" else today
    turn = Turn(current, observations, policy, menu, parallel, n_calls, day)
    turn.framed, turn.tool_texts = framed, tool_texts
    wrap_up = not menu and observations  # tools switched off after max_iterations
    turn.missing = [] if wrap_up else [w for w in current.wants
                                       if menu.get(w) is None and w not in policy.skip]  # fmt: skip
    user_text = texts[-1] if texts else ""
    turn.asks_cheap = bool(CHEAP_WORDS.search(user_text)) or current.budget is not None
    turn.book = _booking(user_text, messages[:last] if last >= 0 else [])
    if turn.book and current.destination and "hotels" not in current.wants:
        current.wants.append("hotels")  # a yes to "shall I book it?": the stay, again
    return turn


#: The user wants it booked: 订, 预订, book, reserve (words, so "notebook" is not one).
BOOK_WORDS = re.compile(r"订|预定|\bbook|\breserv", re.I)
_YES = re.compile(
    r"^\s*(?:好的?|可以|是的?|行|确认|对|没问题|yes|ok(?:ay)?|sure|please|go ahead)", re.I
)
_ASKED_TO_BOOK = re.compile(r"需要我为你预订吗|Shall I book it", re.I)


def _booking(text: str, before: list[dict[str, Any]]) -> str:
    """``"confirmed"`` when the user says yes (or asks to book) right after the assistant asked
    whether to book, "asked" when it asks to book, else "" (rule book)."""
    asked = next((text_of(m) for m in reversed(before) if m.get("role") == "assistant"
                  and not m.get("tool_calls")), "")  # fmt: skip
    if _ASKED_TO_BOOK.search(asked) and (_YES.search(text) or BOOK_WORDS.search(text)):
        return "confirmed"
    return "asked" if BOOK_WORDS.search(text) else ""


def _memory_notes(messages: list[dict[str, Any]]) -> list[str]:
    """The items of the marked memory messages (``session.fresh(carry=…)``, ``an.Memory``), in
    order: "- 出发地：上海", "- (fact) 常住上海"; and what the user asked in a marked summary of
    dropped turns ("- user asked: …", ``an.SummariseOldest``: 002 §5.2's summary keeps what a
    cut would lose). Recalled tool results are left out: they are what a tool said once, not
    what the user asked."""
    notes = []
    for m in messages:
        if m.get("role") not in ("system", "user") or m.get("name") not in (
            MEMORY_NAME,
            SUMMARY_NAME,
        ):
            continue
        for line in text_of(m).splitlines():
            if m.get("name") == SUMMARY_NAME:
                asked = re.match(r"\s*-\s*user asked:\s*(.+)", line)
                notes += [asked.group(1).rstrip("…")] if asked else []
                continue
            item = re.match(r"\s*-\s*(?:\((\w+)\)\s*)?(.+)", line)
            if item and item.group(1) != "tool_result":
                notes.append(item.group(2))
    return notes


def from_runtime(message: dict[str, Any]) -> bool:
    """A user message that is not the user's: the runtime's correction or carried memory (by
    name; the Responses and Anthropic APIs carry no names, so a correction of the answer's
    format is also known by its words)."""
    name = message.get("name")
    if name in (RUNTIME_NAME, MEMORY_NAME):
        return True
    return not name and text_of(message).startswith(CORRECTION)


def text_of(message: dict[str, Any]) -> str:
    """The message's text (:func:`agentnb.messages.content_text`, the one rule)."""
    return content_text(message.get("content"))
