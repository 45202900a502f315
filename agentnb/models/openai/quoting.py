"""Where a reply only shows or quotes, and where its JSON objects are (for text actions).

A text action is taken only from the model's own words at the top level of its reply
(:mod:`~agentnb.models.openai.text_actions`). This module finds what is *not* that: code
and quotations the reply shows (:func:`shown` blanks them out, keeping positions), tool
results the model may echo (:func:`echoed_texts`), and the top-level JSON objects of a text
in one linear pass with a depth bound (:func:`objects`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...messages import content_text

__all__ = ["MAX_DEPTH", "MAX_TEXT", "TooDeep", "echoed", "echoed_texts", "objects", "shown"]

#: What a reply only shows: fenced code, inline code, quoted (``>``) lines.
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`|^[ \t]*>[^\n]*", re.S | re.M)
#: A tag inside a quotation that opens right before it: ``the page said "<tool_call>…"``.
_QUOTED_TAG = re.compile(r"[\"“「『'‘]\s*<tool_call>.*?(?:</tool_call>|$)", re.S)
#: Longer replies are not read for actions; deeper JSON is an invalid action.
MAX_TEXT = 200_000
MAX_DEPTH = 32


class TooDeep(Exception):
    """JSON nested deeper than :data:`MAX_DEPTH`."""


def objects(text: str, limit: int = MAX_DEPTH) -> list[tuple[int, int, bool]]:
    """The top-level ``{…}``/``[…]`` spans of ``text`` as (start, end, too deep), found in one
    pass (strings respected): each character is looked at once, so 160,000 braces cost
    milliseconds, not seconds."""
    spans: list[tuple[int, int, bool]] = []
    depth, start, deep, in_string, escaped = 0, -1, False, False, False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char in "{[":
            if depth == 0:
                start, deep = i, False
            depth += 1
            deep = deep or depth > limit
        elif char in "}]" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1, deep))
        elif char == '"' and depth:
            in_string = True
    return spans


def shown(text: str) -> str:
    """``text`` with what it only shows blanked out (same length, so positions hold): code
    spans, fenced code, quoted lines (``>``) and quotations that open right before a tag."""

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    text = _CODE.sub(blank, text)
    return _QUOTED_TAG.sub(blank, text)


def echoed_texts(messages: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The tool results of a request: an action found inside one of them is data the model
    echoed back (a web page with a ``<tool_call>`` in it), never executed."""
    found = []
    for m in messages:
        if m.get("role") != "tool":
            continue
        content = content_text(m.get("content"))
        if content:
            found.append(content)
    return tuple(found)


def echoed(block: str, echoes: Sequence[str]) -> bool:
    core = block.strip()
    return bool(core) and any(core in echo for echo in echoes)
