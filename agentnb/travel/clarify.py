"""When TravelModel asks instead of calling a tool, and how the cues shape its answer.

It asks before any call when the user gave a date that names no single day ("下个月",
"改天", "next month"), or wants flights or a hotel without saying when: a question, never a
silent default (weather with no date means today). Unknown cities are looked up once and the
tool's ``unknown_city`` code turns into an honest "no data" plus a question (see answer.py).
"""

from __future__ import annotations

from .intent import TripRequest
from .observations import Observation
from .plan import Turn
from .summary import SECTIONS, Style

__all__ = ["answer_style", "clarifying_question"]


def clarifying_question(req: TripRequest, obs: list[Observation], language: str) -> str | None:
    """The question to ask before calling anything, or None."""
    if obs or not req.wants:
        return None
    zh = language == "zh"
    if req.vague and not req.date:
        if zh:
            return (f"请问具体是哪一天？「{req.vague}」没有指明日期，我不想替你猜一个"
                    "（例如：1月20日、下周五、后天）。")  # fmt: skip
        return (
            f"Which day exactly? '{req.vague}' does not name a day, and I would rather not "
            "guess one (for example: January 20, next Friday, the day after tomorrow)."
        )
    needs_day = "flights" in req.wants and req.origin and req.destination
    needs_day = needs_day or ("hotels" in req.wants and req.destination)
    if needs_day and not req.date:
        what = "出发" if "flights" in req.wants else "入住"
        if zh:
            return f"请问哪天{what}？告诉我日期（例如 周五 或 1月10日）我再帮你查。"
        verb = "leave" if "flights" in req.wants else "check in"
        return f"Which day do you {verb}? Tell me the date (e.g. Friday or January 10)."
    return None


def answer_style(turn: Turn) -> Style:
    """The answer's shape from the cues: output rules, alternatives, no tools, missing tools."""
    cues = turn.cues
    detailed: tuple[str, ...] = ()
    if "output_rules" in cues:
        detailed = tuple(cues.sections) or SECTIONS
    return Style(
        detailed=detailed,
        alternatives="budget_alternatives" in cues,
        no_tools="no_tools" in cues,
        missing=[] if "no_tools" in cues else list(turn.missing),
        roles={spec.name: role for role, spec in turn.menu.specs.items()},
        stopped=not turn.menu and bool(turn.observations),
    )
