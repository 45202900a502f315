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
from .clauses import Sentence
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
#: A concession ("无论…，" / "regardless of…,"): not an instruction, skipped. Its words, and
#: what ends it (a comma) or shows it is none (the clause ends first), by language.
_CONCESSION = re.compile(r"(无论|不管|不论)|\b(?:regardless of|no matter)\b", re.I)
_CONCESSION_END = (re.compile(r"[，,。；;]"), re.compile(r"[,.;]"))
#: A condition the stand-in cannot evaluate: skipped, and the line reported.
_CONDITION = re.compile(r"(?:除非|\bunless\b|\bexcept (?:when|if)\b)[^，,。；;.]*", re.I)


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
        merged: list[list[str]] = []
        open_ = 0  # brackets opened and not closed in the last merged part
        for part in parts:
            if merged and open_ > 0:
                merged[-1].append(part)
            else:
                merged.append([part])
                open_ = 0
            open_ += part.count("（") + part.count("(") - part.count("）") - part.count(")")
        for pieces in merged:
            part = "".join(pieces).strip(" \t-*•")
            if re.search(r"\w", part):
                out.append(part)
    return out


def _targets(cue: Cue, value: str, read: Sentence, m: re.Match[str],
             role: str | None) -> dict[str, Any]:  # fmt: skip
    """The knob values a matched cue reads as ({} when it cannot name them)."""
    clause, knob, whole = read.clause(m.start(), m.end()), cue.knob, (0, len(read.text))
    if knob == "today":
        day = re.search(r"\d{4}-\d{2}-\d{2}", m.group(0))
        return {"today": day.group(0)} if day else {}
    if knob == "sections":  # the output rules name their sections (none named: all)
        if value.startswith("-"):
            named = read.named(*clause, SECTION_WORDS) or read.named(*whole, SECTION_WORDS)
            return {"leave_out": named} if named else {}
        return {"sections": read.named(*whole, SECTION_WORDS) or SECTIONS}
    if knob == "skip":
        named = (
            read.named(m.start(), m.end(), SECTION_WORDS)
            or read.named(*clause, SECTION_WORDS)
            or read.named(*whole, SECTION_WORDS)
        )
        if not named:
            return {}
        if value == "none":  # "do not skip the weather": nothing skipped
            return {"skip": ()}
        return {"skip": tuple(s for s in SECTIONS if (s in named) != value.startswith("-"))}
    if knob == "call_first":  # the first section named from the cue on
        first = read.first(m.start()) or read.first(*clause)
        return {"call_first": first} if first else {}
    if knob == "choice":
        roles = read.named(*clause, _ROLE_WORDS) or read.named(*whole, _ROLE_WORDS)
        out = {}
        for r in [role] if role else roles or ["flight", "hotel"]:
            v = _DEFAULTS[f"{r}_choice"] if value == "<default>" else value
            if v in _CHOICES[r]:
                out[f"{r}_choice"] = v
        return out
    return {knob: value}


def _concessions(text: str) -> list[tuple[int, int]]:
    """The spans of the concessions of ``text``: from the words to the comma that ends them
    (none when the clause ends first). The end found after one start serves every start
    before it, so each character is searched once (linear, however many concessions)."""
    spans: list[tuple[int, int]] = []
    ends: list[tuple[int, str]] = [(-1, ""), (-1, "")]  # the next end after a start, by kind
    for m in _CONCESSION.finditer(text):
        if spans and m.start() < spans[-1][1]:
            continue  # inside the previous concession
        kind = 0 if m.group(1) else 1
        if ends[kind][0] < m.end():
            found = _CONCESSION_END[kind].search(text, m.end())
            ends[kind] = (found.start(), found.group(0)) if found else (len(text), "")
        at, char = ends[kind]
        if char and char in "，,":
            spans.append((m.start(), at + 1))
    return spans


def _scoped(text: str) -> tuple[str, list[str]]:
    """``text`` with its concessions and conditions blanked (positions kept), and the
    conditions it could not read."""
    conditions = [c.group(0).strip() for c in _CONDITION.finditer(text)]
    pieces, at = [], 0
    for start, end in _concessions(text):
        pieces += [text[at:start], " " * (end - start)]
        at = end
    text = "".join(pieces) + text[at:]
    text = _CONDITION.sub(lambda c: " " * len(c.group(0)), text)
    return text, conditions


def read_sentence(policy: Policy, sentence: str, where: str, *, role: str | None = None) -> bool:
    """Read one sentence into ``policy``; True when it set at least one knob."""
    text, conditions = _scoped(normalise(sentence))
    read = Sentence(text, _negation(), SECTION_WORDS)  # indexed once: each cue asks in O(log n)
    found = []
    for order, cue in enumerate(cues()):
        if where != "instructions" and cue.scope != "both":
            continue
        for m in cue.pattern.finditer(text):
            if m.end() > m.start():
                value = cue.negated if read.negated(m.start()) else cue.value
                found.append((m.end() - m.start(), order, cue, m, value))
    found.sort(key=lambda f: (-f[0], f[1]))  # the most specific reading first
    taken = bytearray(len(text) + 1)  # 1 where a reading already stands
    chosen: dict[str, tuple[Any, int]] = {}
    conflicts: set[str] = set()
    for length, _, cue, m, value in found:
        if any(taken[m.start() : m.end()]):
            continue
        targets = _targets(cue, value, read, m, role) if value else {}
        if value and not targets:
            continue  # nothing it could name (不要写… with no section): the words stay free
        taken[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
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
    understood = bool(set(chosen) - conflicts)
    if understood and conditions:
        policy.not_understood.append((f"{sentence} — condition not read: {conditions[0]}", where))
    return understood


def read_policy(system: str, tools: list[dict[str, Any]]) -> Policy:
    """The knobs of a request: the instructions sentence by sentence (a later sentence wins),
    then each tool's description (for its own role). Every sentence is read or reported."""
    from .schemas import describes, tool_role  # the schema reader knows which tool does what

    policy = Policy()
    reported: set[str] = set()  # sentences already reported (a repeated one is reported once)
    for sentence in sentences(system):
        before = len(policy.not_understood)
        if read_sentence(policy, sentence, "instructions") or sentence in reported:
            reported.update(line.partition(" — ")[0] for line, _ in policy.not_understood[before:])
            continue
        if not any(line.startswith(sentence) for line, _ in policy.not_understood[before:]):
            policy.not_understood.append((sentence, "instructions"))
        reported.add(sentence)
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
