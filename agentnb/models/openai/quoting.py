"""Where a reply only shows or quotes, and where its JSON objects are (for text actions).

A text action is taken only from the model's own words at the top level of its reply
(:mod:`~agentnb.models.openai.text_actions`). This module finds what is *not* that: code
and quotations the reply shows (:func:`shown` blanks them out, keeping positions), tool
results the model may echo (:func:`echoed_texts`) in every encoding they may have come in
(:func:`decodings`), and the top-level JSON objects of a text in one linear pass with a depth
bound (:func:`objects`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import unquote

__all__ = [
    "MAX_DEPTH",
    "MAX_TEXT",
    "TooDeep",
    "decodings",
    "echoed",
    "echoed_texts",
    "objects",
    "shown",
]

from ...messages import content_text

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


#: A JSON string escape inside text that is not JSON as a whole (a fragment, a log line).
_ESCAPE = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescaped(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] == "u":
        return chr(int(code[1:], 16))
    return _ESCAPES.get(code, code)


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed([*item.keys(), *item.values()]))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _decoded_once(text: str) -> Iterator[str]:
    if "&" in text:
        yield html.unescape(text)  # &quot; &#34; &lt;tool_call&gt;
    if "%" in text:
        yield unquote(text)  # a call carried in a URL
    if "\\" in text:
        yield _ESCAPE.sub(_unescaped, text)  # \"name\": an escaped fragment
    if text.lstrip()[:1] in ("{", "[", '"'):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return
        strings = list(_strings(value))
        yield "\n".join(strings)  # every string a JSON result holds, decoded
        yield from (t for t in strings if t.lstrip()[:1] in ("{", "["))  # JSON in JSON


def decodings(text: str, limit: int = 12) -> list[str]:
    """``text`` and what it reads as once decoded - HTML entities, percent-encoding, JSON
    string escapes, the strings of a JSON document - each decoded again, at most ``limit``
    texts: a tool result in any of these encodings echoes the same actions."""
    found = [text]
    seen = {text}
    for current in found:
        for decoded in _decoded_once(current):
            if decoded not in seen and len(found) < limit:
                seen.add(decoded)
                found.append(decoded)
    return found
