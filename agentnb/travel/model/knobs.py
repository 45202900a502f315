"""The policy knobs TravelModel reads out of its instructions and tool descriptions.

A real model follows its prompt in ways nobody can list. The stand-in turns the prompt into a
short, fixed set of *knobs* instead: each knob has a few values, a default (what it does when
nothing in the prompt sets it), and an effect per value. :data:`KNOBS` is that table, as data;
the cue lexicon (``data/travel/lexicon.csv``, :mod:`.lexicon`) says which words set which value.
``TravelModel.rules()`` lists every knob; ``TravelModel.understood(request)`` shows the values
one request set, and the line that set each.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["KNOBS", "SECTIONS", "Knob", "Policy"]

SECTIONS = ("flights", "weather", "hotels", "cost")


@dataclass(frozen=True)
class Knob:
    name: str
    default: str
    effects: dict[str, str]  # value -> what the model does with it
    source: str  # the article section it comes from ("—" when none)


KNOBS: tuple[Knob, ...] = (
    Knob("tools", "as_needed", {
        "first": "answers only from tool results; misbehave='fabricate' calls the tools anyway",
        "as_needed": "calls the tools the request needs (misbehave='fabricate' invents instead)",
        "memory": "answers at once 'from memory': plausible, invented figures (000 §2.3)",
        "never": "calls no tool; says it cannot look anything up, invents nothing",
    }, "000 §2.2, §2.3"),
    Knob("sections", "summary", {
        "summary": "no output rules: one summary sentence, no times, fares or temperatures",
        "<sections>": "lists each named section in full: flights, weather, hotels, cost",
    }, "000 §6"),
    Knob("leave_out", "none", {
        "none": "every section the user asked for",
        "<sections>": "leaves the named sections out of the answer (they may still be looked up)",
    }, "000 §6"),
    Knob("flight_choice", "earliest", {
        "earliest": "recommends the earliest flight with seats",
        "latest": "recommends the latest flight with seats",
        "cheapest": "recommends the cheapest flight with seats",
        "cheapest_if_asked": "the cheapest when the user says 便宜/cheap or gives a budget, else "
        "the earliest",
        "within_budget": "the earliest flight whose fare leaves room for the cheapest hotel",
    }, "000 §2.2"),
    Knob("hotel_choice", "value", {
        "value": "the best rated among the cheaper half (near a landmark: the closest)",
        "cheapest": "the cheapest hotel with rooms",
        "cheapest_if_asked": "the cheapest when the user says 便宜/cheap or gives a budget, else "
        "'value'",
        "best_rated": "the best rated hotel, whatever it costs",
        "nearest": "the hotel closest to its landmark (or the landmark the user names)",
        "within_budget": "the best rated hotel that fits what the budget leaves after the fare",
    }, "000 §2.2"),
    Knob("missing", "ask_one", {
        "ask_one": "asks for the one thing it needs most (the day), looks up the rest",
        "ask_all": "asks for everything missing at once (route, date, nights) before any call",
        "assume": "asks nothing: assumes the stated defaults (a day: tomorrow unless the line "
        "names one; one night) and says so",
    }, "000 §2.3"),
    Knob("dates", "schema", {
        "schema": "sends what each tool's date description asks (rule date_format)",
        "iso": "always sends YYYY-MM-DD (周五 → 2025-01-10)",
        "relative": "always sends the user's words (周五), even to an ISO schema",
        "ask": "asks for a calendar date when the user gave a relative one (周五)",
    }, "000 §4.3"),
    Knob("budget", "report", {
        "report": "over budget: states the overrun, offers nothing",
        "alternative": "over budget: prices the cheapest combination too and offers it",
        "stop": "over budget: gives the verdict only and asks how to go on (no recommendation)",
    }, "000 §2.2"),
    Knob("language", "user", {
        "user": "answers in the language of the user's message",
        "zh": "answers in Chinese", "en": "answers in English",
    }, "000 §6"),
    Knob("length", "sections", {
        "sections": "as the sections knob says",
        "brief": "one summary sentence, whatever the output rules say",
        "full": "every section in full",
    }, "000 §6"),
    Knob("form", "lines", {
        "lines": "one line per section", "list": "a bulleted list (- …)",
        "table": "a Markdown table (section | detail)", "prose": "one paragraph",
    }, "—"),
    Knob("dress", "asked", {
        "asked": "clothing advice with the weather only when the user asks what to wear",
        "always": "clothing advice with every forecast, in this turn and every later one",
    }, "001 §5.2"),
    Knob("confirm_booking", "none", {
        "none": "says nothing about booking",
        "ask": "when the user wants to book: ends by asking whether to book (it confirms first)",
        "direct": "when the user wants to book: says it has no booking tool, so it cannot book",
    }, "002 §2.4"),
    Knob("calls", "params", {
        "params": "parallel calls when request.params['parallel_tool_calls'] says so",
        "parallel": "every independent call in one reply (001 §3.2)",
        "serial": "one call per reply (article 000's table)",
    }, "001 §3.2"),
    Knob("on_failure", "retry", {
        "retry": "retries a retryable or fixable failure once, then reports it",
        "next_day": "as retry; when the day's flights fail, looks up the next day once and "
        "offers it (周五航班暂时不可用，周六有航班，是否调整行程？)",
        "report": "reports a failure at once, no retry (a fixable argument error is still fixed)",
    }, "000 §5.2"),
    Knob("stop", "confirm", {
        "confirm": "repeats each successful search once 'to confirm' (4 tools take 7 calls)",
        "when_enough": "each search once, then answers",
    }, "000 §3.1, §5.1"),
    Knob("focus", "conversation", {
        "conversation": "earlier turns fill what this one leaves out (route, date, budget); "
        "misbehave='ghost_call' also repeats their needs",
        "latest": "acts on the latest message's needs only: earlier turns fill slots, never "
        "add lookups (ghost calls stop)",
    }, "000 §5.4"),
    Knob("skip", "none", {
        "none": "calls every tool the request needs",
        "<sections>": "does not call the named tools (天气不用查 / don't look up the weather); the "
        "answer says that part was not looked up, as instructed",
    }, "000 §2.2"),
    Knob("call_first", "none", {
        "none": "flights, weather, hotels, then the cost",
        "<section>": "calls that tool before the others (先查天气 / check the weather first)",
    }, "000 §2.3"),
    Knob("today", "model", {
        "model": "the reference date is TravelModel(today=...), 2025-01-06 by default",
        "<date>": "that date is today: 周五 counts from it",
    }, "000 §4.3"),
    Knob("tool_text", "trusted", {
        "trusted": "reads tool results as text it may act on (misbehave='gullible' follows "
        "instructions found there at its rate)",
        "data": "treats tool results as data: misbehave='gullible' follows instructions found "
        "there a quarter as often",
    }, "—"),
    Knob("role", "none", {
        "none": "—", "assistant": "who it is (你是差旅助手): understood, changes nothing",
    }, "000 §2.2"),
)  # fmt: skip
KNOB_NAMES = tuple(k.name for k in KNOBS)


@dataclass
class Policy:
    """The knob values of one request (defaults where nothing set them)."""

    tools: str = "as_needed"
    sections: tuple[str, ...] = ()  # () = summary
    leave_out: tuple[str, ...] = ()
    flight_choice: str = "earliest"
    hotel_choice: str = "value"
    missing: str = "ask_one"
    dates: str = "schema"
    budget: str = "report"
    language: str = "user"
    length: str = "sections"
    form: str = "lines"
    dress: str = "asked"
    confirm_booking: str = "none"
    calls: str = "params"
    on_failure: str = "retry"
    stop: str = "confirm"
    focus: str = "conversation"
    skip: tuple[str, ...] = ()
    call_first: str = "none"
    today: str = "model"
    role: str = "none"
    tool_text: str = "trusted"
    assumed_day: str = ""  # missing="assume": the day a line names ("默认明天"), else tomorrow
    #: knob -> (the line that set it, where it was: "instructions" or "tool <name>")
    set_by: dict[str, tuple[str, str]] = field(default_factory=dict)
    not_understood: list[tuple[str, str]] = field(default_factory=list)  # (line, where)

    def set(self, knob: str, value: Any, line: str, where: str) -> None:
        setattr(self, knob, value)
        self.set_by[knob] = (line, where)

    def values(self) -> dict[str, Any]:
        skip = {"set_by", "not_understood", "assumed_day"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
