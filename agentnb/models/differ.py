"""Differences between requests, messages, JSON values and texts: the one home of each diff.

- :func:`json_changes` / :func:`changed_paths` - the paths where two JSON values differ,
  descending into JSON held in strings (tool results, call arguments): ``content.price``.
- :func:`message_opcodes` / :func:`messages_diff` - two message lists aligned (``difflib``
  over one canonical key per message): kept, added, dropped, edited.
- :func:`line_diff` - two texts (instructions, tool descriptions) line by line, each changed
  line with the spans that changed inside it, for a highlighted prompt diff.
- :func:`where_differs` - where two requests first differ: the path and the text around the
  first changed character (a cassette miss on a long prompt shows the spot, not the start).

Used by the cassette replayer, session edits, the trajectory diff, the inspectors and the
evaluation views alike.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "changed_paths",
    "json_changes",
    "line_diff",
    "message_key",
    "message_opcodes",
    "messages_diff",
    "where_differs",
]


def _parsed(value: Any) -> Any:
    """A JSON object or array held in a string, parsed; anything else unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def json_changes(a: Any, b: Any, path: str = "") -> list[dict[str, Any]]:
    """Where two JSON values differ, as ``{"path": "flights[0].price", "old": 650, "new":
    1050}`` (a side that is missing is absent from its entry). Keys in order of appearance
    (``a``'s, then those only ``b`` has); lists index by index; JSON text is parsed."""
    a, b = _parsed(a), _parsed(b)
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[dict[str, Any]] = []
        for key in [*a, *(k for k in b if k not in a)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in b:
                out.append({"path": sub, "old": a[key]})
            elif key not in a:
                out.append({"path": sub, "new": b[key]})
            else:
                out += json_changes(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(b):
                out.append({"path": sub, "old": a[i]})
            elif i >= len(a):
                out.append({"path": sub, "new": b[i]})
            else:
                out += json_changes(a[i], b[i], sub)
        return out
    return [] if a == b else [{"path": path or "(value)", "old": a, "new": b}]


def changed_paths(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths of :func:`json_changes`: ``["content.price", "content.flights[1]"]``."""
    return [c["path"] for c in json_changes(a, b, path)]


def message_key(wire: Any) -> str:
    """One canonical text per message (keys sorted): what message alignment compares."""
    return json.dumps(wire, sort_keys=True, ensure_ascii=False, default=str)


def message_opcodes(a: Sequence[Any], b: Sequence[Any]) -> Sequence[tuple[str, int, int, int, int]]:
    """``difflib`` opcodes aligning two message lists by :func:`message_key`."""
    matcher = difflib.SequenceMatcher(
        None, [message_key(w) for w in a], [message_key(w) for w in b], False
    )
    return matcher.get_opcodes()


def messages_diff(a: Sequence[Any], b: Sequence[Any]) -> list[dict[str, Any]]:
    """Two requests' messages aligned: rows ``kept`` (a count), ``added``, ``dropped`` and
    ``edited`` (with the old message; a tool result with the :func:`json_changes` of the two,
    a text with its :func:`line_diff`)."""
    rows: list[dict[str, Any]] = []
    for op, i1, i2, j1, j2 in message_opcodes(a, b):
        if op == "equal":
            rows.append({"op": "kept", "count": i2 - i1, "from": i1})
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for d in range(pairs):
            old, new = a[i1 + d], b[j1 + d]
            row = {"op": "edited", "w": new, "old": old}
            if old.get("role") == new.get("role") == "tool":
                row["changes"] = json_changes(old.get("content"), new.get("content"))
            elif isinstance(old.get("content"), str) and isinstance(new.get("content"), str):
                row["lines"] = line_diff(old["content"], new["content"])  # a prompt, highlighted
            rows.append(row)
        rows += [{"op": "dropped", "w": w} for w in a[i1 + pairs : i2]]
        rows += [{"op": "added", "w": w} for w in b[j1 + pairs : j2]]
    return rows


#: Units of an in-line diff: a Latin word or number whole, any other character alone (so
#: Chinese compares character by character, English word by word).
_UNIT = re.compile(r"[A-Za-z0-9_]+|\s+|.", re.DOTALL)


def _spans(old: str, new: str) -> tuple[list[list[int]], list[list[int]]]:
    """The character spans ``[start, end)`` that differ inside two changed lines."""
    a, b = list(_UNIT.finditer(old)), list(_UNIT.finditer(new))
    matcher = difflib.SequenceMatcher(None, [m[0] for m in a], [m[0] for m in b], False)
    gone: list[list[int]] = []
    came: list[list[int]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            if i2 > i1:
                gone.append([a[i1].start(), a[i2 - 1].end()])
            if j2 > j1:
                came.append([b[j1].start(), b[j2 - 1].end()])
    return gone, came


def line_diff(a: str | None, b: str | None) -> list[dict[str, Any]]:
    """Two texts line by line: rows ``{"op": "same" | "removed" | "added", "text": line}``;
    a line replaced by one like it carries ``spans``: the ``[start, end)`` character ranges
    that changed, for highlighting. ``[]`` when the texts are equal."""
    old, new = (a or "").splitlines(), (b or "").splitlines()
    if old == new:
        return []
    rows: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(None, old, new, False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [{"op": "same", "text": line} for line in old[i1:i2]]
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for d in range(pairs):
            gone, came = _spans(old[i1 + d], new[j1 + d])
            rows.append({"op": "removed", "text": old[i1 + d], "spans": gone})
            rows.append({"op": "added", "text": new[j1 + d], "spans": came})
        rows += [{"op": "removed", "text": line, "spans": []} for line in old[i1 + pairs : i2]]
        rows += [{"op": "added", "text": line, "spans": []} for line in new[j1 + pairs : j2]]
    return rows


def where_differs(then: Any, now: Any, path: str) -> str:
    """The first place two values differ: its path, and both texts around the first changed
    character (a long prompt that changed at character 3,000 shows that spot, not its start)."""
    while True:
        if isinstance(then, dict) and isinstance(now, dict) and then.keys() == now.keys():
            key = next(k for k in then if then[k] != now[k])
            then, now, path = then[key], now[key], f"{path}.{key}"
        elif isinstance(then, list) and isinstance(now, list) and len(then) == len(now):
            i = next(i for i, (a, b) in enumerate(zip(then, now, strict=True)) if a != b)
            then, now, path = then[i], now[i], f"{path}[{i}]"
        else:
            break
    a = then if isinstance(then, str) else json.dumps(then, ensure_ascii=False)
    b = now if isinstance(now, str) else json.dumps(now, ensure_ascii=False)
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, at - _CONTEXT)

    def around(text: str, value: Any) -> str:
        piece = text[start : at + _CONTEXT]
        piece = ("…" if start else "") + piece + ("…" if at + _CONTEXT < len(text) else "")
        return repr(piece) if isinstance(value, str) else piece

    texts = isinstance(then, str) and isinstance(now, str)
    where = f" at character {at}" if at and (texts or len(a) > 2 * _CONTEXT) else ""
    return f"{path}{where}: recorded {around(a, then)}, now {around(b, now)}"


_CONTEXT = 60  # characters shown on each side of the first difference
