"""Reading instructions and tool descriptions into policy knobs, through a cue lexicon (data).

The lexicon is ``data/travel/lexicon.csv``: one row per cue, in Chinese and English with their
synonyms, each setting one knob (:mod:`.knobs`) to a value, or to its ``negated`` value when a
negation (不要, 不用, 别, never, don't, do not, …) comes before the cue in the same clause.
Reading goes sentence by sentence; within a sentence the rows are tried in the lexicon's order,
the first row to set a knob wins and a text span serves one row only (so 不要继续调用工具 is
the ``stop`` knob, not "do not call tools"). A sentence of the instructions that sets no knob is
*not understood*, and reported so — never silently ignored. Tool descriptions are read for the
rows whose scope is ``both`` (how to choose: 推荐最便宜的); a description sentence that sounds like
an instruction (推荐, 必须, prefer, always…) and sets nothing is reported as not understood too.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from typing import Any

from ..data import data_dir
from ..dates import DATE_PATTERN
from .knobs import KNOBS, SECTIONS, Policy

__all__ = ["NEGATION", "Cue", "cues", "read_policy", "sentences"]

NEGATION = re.compile(
    r"不要|不用|不必|不需要|无需|别|禁止|勿|不能|不得|不许|不再|从不|绝不|决不|避免|"
    r"\bnever\b|\bdon't\b|\bdo not\b|\bdoesn't\b|\bdoes not\b|\bno need to\b|\bavoid\b|\bnot\b",
    re.IGNORECASE,
)
#: A description sentence that reads as an instruction (when it sets no knob: not understood).
DIRECTIVE = re.compile(r"推荐|优先|必须|不要|请|应该|总是|只|\b(?:prefer|always|never|must|should|"
                       r"recommend|only|do not|don't)\b", re.IGNORECASE)  # fmt: skip
#: Words that name an answer section (for the output rules and "不要列出天气").
SECTION_WORDS = {
    "flights": r"航班|机票|flight|fare",
    "weather": r"天气|气温|weather|temperature",
    "hotels": r"酒店|住宿|hotel",
    "cost": r"预算|总价|费用|budget|total|cost",
}
_ROLE_WORDS = {"flight": r"航班|机票|flight|fare", "hotel": r"酒店|住宿|房间|hotel|room"}
_CHOICES = {
    "flight": {"earliest", "latest", "cheapest", "cheapest_if_asked", "within_budget"},
    "hotel": {"value", "cheapest", "cheapest_if_asked", "best_rated", "nearest", "within_budget"},
}
_DEFAULTS = {k.name: k.default for k in KNOBS}


@dataclass(frozen=True)
class Cue:
    knob: str
    value: str
    negated: str  # the value after a negation; "" = a negated cue is not understood
    scope: str  # "instructions" or "both" (tool descriptions too)
    pattern: re.Pattern[str]
    example: str


@functools.lru_cache(maxsize=2)
def cues(path: str | None = None) -> tuple[Cue, ...]:
    """The lexicon's rows, in order (``data/travel/lexicon.csv``)."""
    with open(path or data_dir() / "lexicon.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return tuple(
        Cue(r["knob"], r["value"], r["negated"], r["scope"], re.compile(r["cue"], re.I),
            r["example"])
        for r in rows
    )  # fmt: skip


def sentences(text: str) -> list[str]:
    """The sentences of a prompt: a wrapped line joins the next one; 。；;!? and '. ' end one."""
    out: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        joined = re.sub(r"(?<![。；;！!？?：:.])\n\s*", " ", paragraph.strip())
        for part in re.split(r"(?<=[。；;！!？?])|(?<=\.)\s+|\n", joined):
            part = part.strip(" \t-*•")
            if re.search(r"\w", part):
                out.append(part)
    return out


def _negated(sentence: str, start: int) -> bool:
    """A negation before ``start`` in the same clause (after the last comma)."""
    clause = re.split(r"[，,、:：]", sentence[:start])[-1]
    return bool(NEGATION.search(clause))


def _named(sentence: str) -> tuple[str, ...]:
    named = tuple(s for s, p in SECTION_WORDS.items() if re.search(p, sentence, re.I))
    return named or SECTIONS


def _apply(policy: Policy, cue: Cue, value: str, sentence: str, m: re.Match[str],
           where: str, role: str | None, skip: set[str]) -> set[str]:  # fmt: skip
    """Set the knob(s) a matched cue names (not those in ``skip``); the knobs it set."""
    if cue.knob == "today":
        targets = {"today": m.group("d")}
    elif cue.knob == "sections":
        targets = {"leave_out" if value.startswith("-") else "sections": _named(sentence)}
    elif cue.knob == "choice":
        named = [r for r, p in _ROLE_WORDS.items() if re.search(p, sentence, re.I)]
        targets = {}
        for r in [role] if role else named or ["flight", "hotel"]:
            v = _DEFAULTS[f"{r}_choice"] if value == "<default>" else value
            if v in _CHOICES[r]:
                targets[f"{r}_choice"] = v
    else:
        targets = {cue.knob: value}
    done = set()
    for knob, v in targets.items():
        if knob not in skip:
            policy.set(knob, v, sentence, where)
            done.add(knob)
    if policy.missing == "assume" and "missing" in done:
        day = DATE_PATTERN.search(sentence)
        policy.assumed_day = day.group(0) if day else ""
    return done


def read_sentence(policy: Policy, sentence: str, where: str, *, role: str | None = None) -> bool:
    """Read one sentence into ``policy``; True when it set at least one knob."""
    taken: list[set[int]] = []
    set_here: set[str] = set()
    for cue in cues():
        if where != "instructions" and cue.scope != "both":
            continue
        if cue.knob in set_here:
            continue
        for m in cue.pattern.finditer(sentence):
            span = set(range(m.start(), max(m.end(), m.start() + 1)))
            if any(span & t for t in taken):
                continue
            value = cue.negated if _negated(sentence, m.start()) else cue.value
            if value:
                done = _apply(policy, cue, value, sentence, m, where, role, set_here)
                if done:
                    taken.append(span)
                    set_here |= done
            break
    return bool(set_here)


def read_policy(system: str, tools: list[dict[str, Any]]) -> Policy:
    """The knobs of a request: the instructions sentence by sentence (a later sentence wins),
    then each tool's description (for its own role)."""
    from .schemas import tool_role  # the schema reader knows which tool does what

    policy = Policy()
    for sentence in sentences(system):
        if not read_sentence(policy, sentence, "instructions"):
            policy.not_understood.append((sentence, "instructions"))
    for t in tools:
        function = t.get("function") if isinstance(t, dict) else None
        if not isinstance(function, dict):
            continue
        name, role = str(function.get("name", "?")), tool_role(function)
        narrowed = {"flights": "flight", "hotels": "hotel"}.get(role or "")
        for sentence in sentences(str(function.get("description") or "")):
            found = read_sentence(policy, sentence, f"tool {name}", role=narrowed)
            if not found and DIRECTIVE.search(sentence):
                policy.not_understood.append((sentence, f"tool {name}"))
    return policy
