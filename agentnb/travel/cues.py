"""The instruction cues TravelModel looks for in the system message, and what each one does.

A real model follows its prompt in ways no one can list. This stand-in follows a short, fixed
table instead, so a learner can see *why* a prompt change changed the run: each cue is a
regular expression over the system (or developer) messages, and :data:`CUES` says what the
model does with the cue and without it. ``TravelModel.rules()`` shows this table together
with the schema rules of :mod:`agentnb.travel.schemas`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["CUES", "Cue", "Cues", "read_cues"]


@dataclass(frozen=True)
class Cue:
    name: str
    looks_for: str  # examples, for people
    pattern: str  # searched in the system text, case-insensitive
    with_cue: str
    without: str
    source: str


CUES: tuple[Cue, ...] = (
    Cue("no_tools",
        "不要调用任何工具 / do not call any tools",
        r"不要调用任何工具|不要使用(?:任何)?工具|不(?:要)?调用工具|禁止(?:调用|使用)工具|"
        r"(?:do not|don't|never) (?:call|use) (?:any )?tools|"
        r"without (?:calling |using )?(?:any )?tools",
        "calls no tool; answers that it cannot look anything up (with fabricate: invents)",
        "calls the tools the request needs", "000 §2.3"),
    Cue("tools_first",
        "必须使用工具, 不要编造 / must use the tools, never make up",
        r"必须使用工具|工具返回结果后|不要编造|不得编造|must use (?:the )?tools|"
        r"never make up|do not make up|don't make up|only after the tools",
        "misbehave='fabricate' still calls the tools and answers from their results",
        "misbehave='fabricate' answers at once from 'memory' (invented figures)",
        "000 §2.2, §2.3"),
    Cue("stop_when_enough",
        "不要重复查询, 不要继续调用工具 / do not repeat, stop calling tools",
        r"不要重复查询|不要重复调用|不要继续调用工具|不再调用工具|do not repeat|don't repeat|"
        r"stop calling tools|never repeat",
        "each search once (one retry after a retryable or fixable failure), then answers",
        "repeats each successful search once 'to confirm' before moving on (so 4 tools take "
        "7 calls and max_iterations=6 stops the run)", "000 §3.1, §5.1"),
    Cue("output_rules",
        "输出规范：… / Output rules: … (the sections it names)",
        r"输出规范|输出要求|output rules?|output format",
        "the answer lists in detail each section the rule names: flights (航班/flight), "
        "weather (天气/weather), hotel (酒店/hotel), budget (预算/budget)",
        "a one-line summary that leaves out times, fares, temperatures and nightly prices",
        "000 §6"),
    Cue("answer_language",
        "用英文回答 / answer in English",
        r"(?:用|使用|以)(?P<lang>中文|汉语|英文|英语)(?:回答|回复)|"
        r"(?:answer|reply|respond) in (?P<lang_en>english|chinese)",
        "answers in that language", "answers in the language of the user's message", "000 §6"),
    Cue("budget_alternatives",
        "备选方案 / offer an alternative",
        r"备选方案|替代方案|offer an alternative|suggest an alternative|alternatives?",
        "over budget: prices the cheapest combination too and offers it",
        "over budget: states the overrun, offers nothing", "000 §2.2"),
    Cue("error_advice",
        "工具返回 error 字段时…给出建议 / when a tool returns an error … advise",
        r"返回\s*error|工具(?:调用)?失败|(?:when|if) a tool (?:returns an error|fails)",
        "when the asked day's flights fail for that day (timeout, upstream error, rate limit) "
        "or are sold out, looks up the next day once and offers it as a labelled alternative: "
        "周五航班暂时不可用，周六有航班，是否调整行程？ Weather, hotel and budget stay on the "
        "asked day (the answer says so); the budget leaves the unavailable flight out and "
        "gives the other day's fare apart, never added to the asked day's hotel. A mistake of "
        "its own (unknown tool, wrong or malformed arguments) corrected on the same day is no "
        "failure of the day: no such line",
        "says the flights are unavailable, and no more", "000 §5.2"),
    Cue("today",
        "今天是 2025-01-06 / today is 2025-01-06",
        r"(?:今天是|当前日期[:：]?|today is)\s*(?P<today>\d{4}-\d{2}-\d{2})",
        "uses that date to turn 周五 into YYYY-MM-DD when a schema asks for ISO dates",
        "uses TravelModel(today=...), 2025-01-06 by default", "000 §4.3"),
)  # fmt: skip
_COMPILED = {c.name: re.compile(c.pattern, re.IGNORECASE) for c in CUES}
#: Output-rule words -> answer sections.
SECTION_WORDS = {
    "flights": r"航班|flight",
    "weather": r"天气|weather",
    "hotels": r"酒店|hotel",
    "cost": r"预算|总价|budget|total",
}


@dataclass
class Cues:
    """The cues found in one request's system text."""

    found: set[str] = field(default_factory=set)
    sections: list[str] = field(default_factory=list)  # named by the output rules
    language: str | None = None  # "zh" / "en" when the instructions say so
    today: str | None = None

    def __contains__(self, name: object) -> bool:
        return name in self.found


def read_cues(system: str) -> Cues:
    """Which cues of :data:`CUES` the system text holds."""
    cues = Cues()
    for name, pattern in _COMPILED.items():
        m = pattern.search(system)
        if not m:
            continue
        cues.found.add(name)
        if name == "output_rules":
            rule = system[m.start() :].split("\n\n", 1)[0]  # the rule's paragraph
            cues.sections = [s for s, p in SECTION_WORDS.items() if re.search(p, rule, re.I)]
        elif name == "answer_language":
            lang = (m.group("lang") or m.group("lang_en") or "").lower()
            cues.language = "en" if lang in ("英文", "英语", "english") else "zh"
        elif name == "today":
            cues.today = m.group("today")
    return cues
