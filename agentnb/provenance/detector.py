"""Instructions found in data: a deterministic detector, its rules listed (:data:`RULES`).

A tool result (or a recalled memory) is data for the model. Text inside it that addresses the
assistant or overrides its task is an *instruction found in data*, the way a prompt injection
reaches an agent. :func:`scan` finds such spans in Chinese and English, each with the rules that
fired and why, so a view can highlight them and a check can ask whether a call obeyed one.

How it decides, in order:

1. A cheap prefilter (:data:`TRIGGER`): a text with none of the rules' cue words has no flag
   (most tool results stop here, in a few microseconds).
2. Each rule of :data:`RULES` is a regular expression, ``strong`` or not. A *block* rule
   (``<INFORMATION>…</INFORMATION>``) flags the whole block. Any other hit flags its sentence
   (split at 。！？!? . and line ends, never inside a block).
3. A sentence is flagged when a strong rule fires in it, or two different weak rules do; the
   sentence right after a flagged one is flagged too when any rule fires in it, and always
   after an override or a new task (the goal that follows "ignore your instructions." is part
   of the injection). Adjacent flagged sentences
   merge into one span, which carries every rule that fired in it and a reason in words.

Limits, said plainly: it is a list of patterns, not an understanding. It misses instructions
written without its cue words (a plain "TODO: book X" with no address or urgency, another
language, base64, a paraphrase), and it flags ordinary text that happens to carry them (a
review saying "IMPORTANT: please book early", a forum post quoting an attack). Its verdicts
are evidence for a person or a check to weigh, never a filter that makes an agent safe.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .rules import RULES, Rule, meaning, triggered

__all__ = ["Flag", "scan"]


#: Rules after whose sentence the next one is the payload, whatever it says.
_REPLACES = {"override", "override_zh", "task"}
_END = re.compile(r"[。！？!?\n]+|\.(?=\s|$)|(?<=[\"'])\s*,\s*(?=[\"'])")


@dataclass(frozen=True, slots=True)
class Flag:
    """A span of a text that reads as an instruction to the assistant: ``[start, end)`` of
    the scanned text, the ``rules`` that fired there and ``why``, in words."""

    start: int
    end: int
    text: str
    rules: tuple[str, ...]
    why: str

    def to_dict(self) -> dict[str, object]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "rules": list(self.rules),
            "why": self.why,
        }


def _sentences(text: str, blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sentence spans of ``text``, a block kept whole."""
    cuts = [0]
    for m in _END.finditer(text):
        if not any(a < m.start() < b for a, b in blocks):
            cuts.append(m.end())
    for a, b in blocks:  # a block is a sentence of its own
        cuts += [a, b]
    cuts = sorted({*cuts, len(text)})
    spans = []
    for a, b in itertools.pairwise(cuts):
        while a < b and text[a].isspace():
            a += 1
        if a < b:
            spans.append((a, b))
    return spans


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 40 else text[:37] + "…")


def scan(text: str, tools: Iterable[str] = ()) -> list[Flag]:
    """The spans of ``text`` that read as instructions to the assistant (see the module).

    ``tools``: the names of the agent's tools; a sentence naming one counts as a weak hit
    (``tool``), so "call send_itinerary" pairs with an imperative. Deterministic: the same
    text gives the same flags."""
    tools = list(tools)
    if not text or not triggered(text, tools):
        return []
    if not unicodedata.is_normalized("NFKC", text):
        folded = unicodedata.normalize("NFKC", text)
        if len(folded) == len(text):  # full-width letters: read folded, report on the original
            return [
                Flag(f.start, f.end, text[f.start : f.end], f.rules, f.why)
                for f in scan(folded, tools)
            ]
    hits: list[tuple[Rule, int, int]] = []
    blocks: list[tuple[int, int]] = []
    for rule in RULES:
        for m in rule.pattern.finditer(text):
            hits.append((rule, m.start(), m.end()))
            if rule.block:
                blocks.append((m.start(), m.end()))
    tool_hits = [
        (t, m.start())
        for t in tools
        if t
        for m in re.finditer(rf"(?<![\w]){re.escape(t)}(?![\w])", text)
    ]
    if not hits and not tool_hits:
        return []
    sentences = _sentences(text, blocks)
    fired: list[dict[str, str]] = []  # per sentence: rule id -> the words that fired it
    strong: list[bool] = []
    for a, b in sentences:
        found: dict[str, str] = {}
        is_strong = False
        for rule, s, e in hits:
            if a <= s < b:
                found.setdefault(rule.id, text[s:e])
                is_strong = is_strong or rule.strong
        for name, s in tool_hits:
            if a <= s < b:
                found.setdefault("tool", name)
        fired.append(found)
        strong.append(is_strong)
    flagged = [s or len(f) >= 2 for s, f in zip(strong, fired, strict=True)]
    for i in range(1, len(flagged)):
        # the goal that follows an override is part of it ("Ignore your instructions. Do X.")
        after = fired[i] or bool(_REPLACES & set(fired[i - 1]))
        if flagged[i - 1] and not flagged[i] and after and strong[i - 1]:
            flagged[i] = True
    out: list[Flag] = []
    i = 0
    while i < len(sentences):
        if not flagged[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(sentences) and flagged[j + 1]:
            j += 1
        start, end = sentences[i][0], sentences[j][1]
        while end > start and text[end - 1].isspace():
            end -= 1
        why: dict[str, str] = {}
        for k in range(i, j + 1):
            for rid, words in fired[k].items():
                why.setdefault(rid, words)
        reasons = [f"{meaning(rid)} ({_quote(words)})" for rid, words in why.items()]
        out.append(Flag(start, end, text[start:end], tuple(why), "; ".join(reasons)))
        i = j + 1
    return out
