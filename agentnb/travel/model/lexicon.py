"""Reading instructions and tool descriptions into policy knobs, through a cue lexicon (data).

The lexicon is ``data/travel/lexicon.csv``: one row per cue, each setting one knob
(:mod:`.knobs`) to a value, or to its ``negated`` value when a negation comes before the cue in
the same clause. A cue is a regular expression that may name *synonym sets* of
``data/travel/synonyms.csv`` as ``{NAME}`` (``{CHEAP}``: 便宜, 实惠, 划算, cheaper, less
expensive…; ``{NEG}``: 不要, 别, never, don't, rather than…), so a knob is read by meaning,
not by one wording. The text is normalised first (:mod:`.normal`: full width, traditional
characters, curly quotes).

Reading goes sentence by sentence. Within a sentence every row's matches are collected and the
most specific (the longest) is read first; a text span serves one reading only (so
不要继续调用工具 is the ``stop`` knob, not "do not call tools"). A concession is not an
instruction: in "无论用户用什么语言提问，都请用英文回答" the 无论 clause is skipped, and a
condition ("unless…", "除非…") is not read — the line is then listed as partly not understood.
Two readings of one knob that are equally specific and disagree are a *conflict*: the knob is
left as it was and the line is reported. A sentence of the instructions that sets no knob is
*not understood*, and reported so; so is a tool description sentence that neither sets a knob
nor says what the tool does. Nothing is silently ignored.
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
from .normal import normalise

__all__ = ["SECTION_WORDS", "Cue", "cues", "read_policy", "sentences", "synonyms"]

#: Words that name an answer section (for the output rules, "不要列出天气", per-tool lines).
SECTION_WORDS = {
    "flights": r"航班|机票|flights?|fares?",
    "weather": r"天气|气温|weather|temperature",
    "hotels": r"酒店|住宿|hotels?",
    "cost": r"预算|总价|费用|budget|total|cost",
}
_ROLE_WORDS = {"flight": r"航班|机票|flight|fare", "hotel": r"酒店|住宿|房间|hotel|room"}
_CHOICES = {
    "flight": {"earliest", "latest", "cheapest", "cheapest_if_asked", "within_budget"},
    "hotel": {"value", "cheapest", "cheapest_if_asked", "best_rated", "nearest", "within_budget"},
}
_DEFAULTS = {k.name: k.default for k in KNOBS}
#: A concession ("无论…，" / "regardless of…,"): not an instruction, skipped.
_CONCESSION = re.compile(
    r"(?:无论|不管|不论)[^，,。；;]*[，,]|\b(?:regardless of|no matter)\b[^,.;]*,", re.I
)
#: A condition the stand-in cannot evaluate: skipped, and the line reported.
_CONDITION = re.compile(r"(?:除非|\bunless\b|\bexcept (?:when|if)\b)[^，,。；;.]*", re.I)
_CLAUSE = re.compile(r"[，,、:：;；]")


@dataclass(frozen=True)
class Cue:
    knob: str
    value: str
    negated: str  # the value after a negation; "" = a negated cue is not understood
    scope: str  # "instructions" or "both" (tool descriptions too)
    pattern: re.Pattern[str]
    example: str
    source: str = ""  # the cue as written in the lexicon (before the synonym sets)


def _rows(name: str, path: str | None) -> list[dict[str, str]]:
    with open(path or data_dir() / name, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@functools.lru_cache(maxsize=2)
def synonyms(path: str | None = None) -> dict[str, str]:
    """The synonym sets (``data/travel/synonyms.csv``): name -> a regular expression."""
    return {r["name"]: r["words"] for r in _rows("synonyms.csv", path)}


def _expand(cue: str, sets: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in sets:
            raise ValueError(f"lexicon cue {cue!r} names an unknown synonym set {m.group(1)!r}")
        return f"(?:{sets[m.group(1)]})"

    return re.sub(r"\{([A-Z]+)\}", one, cue)


@functools.lru_cache(maxsize=2)
def cues(path: str | None = None) -> tuple[Cue, ...]:
    """The lexicon's rows, in order, their synonym sets expanded."""
    sets = synonyms()
    return tuple(
        Cue(r["knob"], r["value"], r["negated"], r["scope"],
            re.compile(_expand(r["cue"], sets), re.I), r["example"], r["cue"])
        for r in _rows("lexicon.csv", path)
    )  # fmt: skip


@functools.lru_cache(maxsize=1)
def _negation() -> re.Pattern[str]:
    return re.compile(synonyms()["NEG"], re.I)


def sentences(text: str) -> list[str]:
    """The sentences of a prompt: a wrapped line joins the next one; 。；;!? and '. ' end one,
    but not inside brackets (a description's "（…；…）" stays one sentence)."""
    out: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        joined = re.sub(r"(?<![。；;！!？?：:.])\n\s*", " ", paragraph.strip())
        parts = re.split(r"(?<=[。；;！!？?])|(?<=\.)\s+|\n", joined)
        merged: list[str] = []
        for part in parts:
            if merged and merged[-1].count("（") + merged[-1].count("(") > (
                merged[-1].count("）") + merged[-1].count(")")
            ):
                merged[-1] += part
            else:
                merged.append(part)
        for part in merged:
            part = part.strip(" \t-*•")
            if re.search(r"\w", part):
                out.append(part)
    return out


def _negated(text: str, start: int) -> bool:
    """A negation before ``start`` in the same clause (after the last comma)."""
    return bool(_negation().search(_CLAUSE.split(text[:start])[-1]))


def _clause(text: str, m: re.Match[str]) -> str:
    """The clause a match stands in (between commas), with the match itself."""
    start = max((i.end() for i in _CLAUSE.finditer(text, 0, m.start())), default=0)
    end = next((i.start() for i in _CLAUSE.finditer(text, m.end())), len(text))
    return text[start:end]


def _named(text: str) -> tuple[str, ...]:
    return tuple(s for s, p in SECTION_WORDS.items() if re.search(p, text, re.I))


def _targets(cue: Cue, value: str, text: str, m: re.Match[str],
             role: str | None) -> dict[str, Any]:  # fmt: skip
    """The knob values a matched cue reads as ({} when it cannot name them)."""
    clause, knob = _clause(text, m), cue.knob
    if knob == "today":
        day = re.search(r"\d{4}-\d{2}-\d{2}", m.group(0))
        return {"today": day.group(0)} if day else {}
    if knob == "sections":  # the output rules name their sections (none named: all)
        if value.startswith("-"):
            named = _named(clause) or _named(text)
            return {"leave_out": named} if named else {}
        return {"sections": _named(text) or SECTIONS}
    if knob == "skip":
        named = _named(m.group(0)) or _named(clause) or _named(text)
        if not named:
            return {}
        if value == "none":  # "do not skip the weather": nothing skipped
            return {"skip": ()}
        return {"skip": tuple(s for s in SECTIONS if (s in named) != value.startswith("-"))}
    if knob == "call_first":  # the first section named from the cue on
        for scope in (text[m.start() :], clause):
            hits = [(f.start(), s) for s, p in SECTION_WORDS.items()
                    if (f := re.search(p, scope, re.I))]  # fmt: skip
            if hits:
                return {"call_first": min(hits)[1]}
        return {}
    if knob == "choice":
        roles = [r for r, p in _ROLE_WORDS.items() if re.search(p, clause, re.I)]
        roles = roles or [r for r, p in _ROLE_WORDS.items() if re.search(p, text, re.I)]
        out = {}
        for r in [role] if role else roles or ["flight", "hotel"]:
            v = _DEFAULTS[f"{r}_choice"] if value == "<default>" else value
            if v in _CHOICES[r]:
                out[f"{r}_choice"] = v
        return out
    return {knob: value}


def _scoped(text: str) -> tuple[str, list[str]]:
    """``text`` with its concessions and conditions blanked (positions kept), and the
    conditions it could not read."""
    conditions = [c.group(0).strip() for c in _CONDITION.finditer(text)]
    for pattern in (_CONCESSION, _CONDITION):
        text = pattern.sub(lambda c: " " * len(c.group(0)), text)
    return text, conditions


def read_sentence(policy: Policy, sentence: str, where: str, *, role: str | None = None) -> bool:
    """Read one sentence into ``policy``; True when it set at least one knob."""
    text, conditions = _scoped(normalise(sentence))
    found = []
    for order, cue in enumerate(cues()):
        if where != "instructions" and cue.scope != "both":
            continue
        for m in cue.pattern.finditer(text):
            if m.end() > m.start():
                value = cue.negated if _negated(text, m.start()) else cue.value
                found.append((m.end() - m.start(), order, cue, m, value))
    found.sort(key=lambda f: (-f[0], f[1]))  # the most specific reading first
    taken: list[range] = []
    chosen: dict[str, tuple[Any, int]] = {}
    conflicts: set[str] = set()
    for length, _, cue, m, value in found:
        span = range(m.start(), m.end())
        if any(span.start < t.stop and t.start < span.stop for t in taken):
            continue
        targets = _targets(cue, value, text, m, role) if value else {}
        if value and not targets:
            continue  # nothing it could name (不要写… with no section): the words stay free
        taken.append(span)
        for knob, v in targets.items():
            if knob not in chosen:
                chosen[knob] = (v, length)
            elif chosen[knob][0] != v and chosen[knob][1] == length:
                conflicts.add(knob)
    for knob in conflicts:
        policy.not_understood.append((f"{sentence} — conflict: {knob} is read two ways", where))
    for knob, (v, _) in chosen.items():
        if knob not in conflicts:
            policy.set(knob, v, sentence, where)
    if "missing" in chosen and policy.missing == "assume":
        day = DATE_PATTERN.search(text)
        policy.assumed_day = day.group(0) if day else ""
    read = bool(set(chosen) - conflicts)
    if read and conditions:
        policy.not_understood.append((f"{sentence} — condition not read: {conditions[0]}", where))
    return read


def read_policy(system: str, tools: list[dict[str, Any]]) -> Policy:
    """The knobs of a request: the instructions sentence by sentence (a later sentence wins),
    then each tool's description (for its own role). Every sentence is read or reported."""
    from .schemas import describes, tool_role  # the schema reader knows which tool does what

    policy = Policy()
    for sentence in sentences(system):
        if not read_sentence(policy, sentence, "instructions") and not any(
            line.startswith(sentence) for line, _ in policy.not_understood
        ):
            policy.not_understood.append((sentence, "instructions"))
    for t in tools:
        function = t.get("function") if isinstance(t, dict) else None
        if not isinstance(function, dict):
            continue
        name, role = str(function.get("name", "?")), tool_role(function)
        narrowed = {"flights": "flight", "hotels": "hotel"}.get(role or "")
        for sentence in sentences(str(function.get("description") or "")):
            found = read_sentence(policy, sentence, f"tool {name}", role=narrowed)
            if not found and not describes(sentence):
                policy.not_understood.append((sentence, f"tool {name}"))
    return policy
