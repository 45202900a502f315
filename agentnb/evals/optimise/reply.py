"""Reading a proposer's reply: the JSON objects in it, in time linear in its length.

A reply is text a model wrote: prose, code fences, one JSON object or several, objects
nested in others, broken ones. :func:`json_objects` finds every object in it in one pass
over its brackets and strings (a ``"`` opens a string only inside braces: prose may hold
quotes), then decodes the outermost balanced spans in order; a span that does not decode
is looked into (its inner spans come next), one that does gives its nested objects too,
without decoding them again. So nothing a reply holds can cost more than a few passes over
it: a reply longer than :data:`MAX_CHARS` is not read, a span nested deeper than
:data:`MAX_DEPTH` is not decoded (the decoder recurses per level), and the decoding stops
once it has read :data:`WORK` times the reply (a reply of many broken, nested spans).
Each limit is said in :attr:`Objects.problem`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_CHARS", "MAX_DEPTH", "WORK", "Objects", "fences", "json_objects"]

#: The longest reply read (characters): whole instructions are far shorter.
MAX_CHARS = 1_000_000
#: The deepest nesting of brackets decoded (a proposal is 2 levels deep).
MAX_DEPTH = 64
#: Decoding stops once it has read this many times the reply's length.
WORK = 4

_TOKEN = re.compile(r'[{}\[\]"]')
_HEAD = re.compile(r"```[a-zA-Z]*\n")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


@dataclass
class Objects:
    """The JSON objects of a reply, in the order they start; ``problem`` says what was not
    read ("" when the whole reply was)."""

    found: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""


def _spans(text: str) -> tuple[list[tuple[int, int, int]], bool]:
    """Every balanced ``{...}`` of ``text`` as ``(start, end, height)`` (its nesting below
    it), and whether the text nests deeper than :data:`MAX_DEPTH` anywhere. One pass."""
    stack: list[list[Any]] = []  # [opener, start, height]
    spans: list[tuple[int, int, int]] = []
    deep = False
    pos = 0
    while True:
        m = _TOKEN.search(text, pos)
        if m is None:
            break
        char, at = m.group(), m.start()
        pos = at + 1
        if char == '"':
            if stack:  # a JSON string: skip it whole (it may hold brackets)
                s = _STRING.match(text, at)
                if s is None:
                    break  # never closed: nothing after it closes a span
                pos = s.end()
            continue
        if char in "{[":
            stack.append([char, at, 0])
            deep = deep or len(stack) > MAX_DEPTH
            continue
        opener = "{" if char == "}" else "["
        while stack and stack[-1][0] != opener:  # unclosed brackets of the other kind
            stack.pop()
        if not stack:
            continue
        _, start, height = stack.pop()
        if stack:
            stack[-1][2] = max(stack[-1][2], height + 1)
        if opener == "{":
            spans.append((start, at + 1, height))
    spans.sort()
    return spans, deep


def _nested(value: Any) -> Iterator[dict[str, Any]]:
    """``value``'s objects, itself first, in the order they start in its text."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def json_objects(text: str) -> Objects:
    """Every JSON object in ``text`` (in fences or in prose), in the order they start."""
    out = Objects()
    if len(text) > MAX_CHARS:
        out.problem = (
            f"the reply is {len(text):,} characters, more than the {MAX_CHARS:,} a proposal "
            "is read in; it was not read"
        )
        return out
    spans, deep = _spans(text)
    budget = WORK * len(text) + 4096
    covered = 0  # the end of the last span decoded: its inner spans are in it already
    skipped = False
    for start, end, height in spans:
        if start < covered:
            continue
        if height >= MAX_DEPTH:
            skipped = True
            continue
        budget -= end - start
        if budget < 0:
            out.problem = "the reply holds too many broken objects to read them all"
            break
        try:
            value = json.loads(text[start:end])
        except (ValueError, RecursionError):
            continue
        covered = end
        out.found.extend(_nested(value))
    if (deep or skipped) and not out.problem:
        out.problem = f"objects nested deeper than {MAX_DEPTH} levels were not read"
    return out


def fences(text: str) -> list[tuple[int, int, str]]:
    """The code blocks of ``text`` (a line opening with three backticks and an optional
    language, up to the next three backticks) as ``(start, end, body)``; one pass."""
    found = []
    at = text.find("```")
    while at >= 0:
        head = _HEAD.match(text, at)
        if head is None:
            at = text.find("```", at + 1)
            continue
        close = text.find("```", head.end())
        if close < 0:
            break
        found.append((at, close + 3, text[head.end() : close]))
        at = text.find("```", close + 3)
    return found
