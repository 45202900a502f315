"""Where two requests first differ: the path into the JSON and the text around the first
changed character (a cassette miss on a long prompt shows the spot, not the common start)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["where_differs"]


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
