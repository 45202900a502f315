"""What a hand edit changed: the record a session keeps of each edit, and the paths of a
message that differ (descending into JSON held in strings). ``Session`` makes the edits."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..events import describe_edit
from ..messages import Message

__all__ = ["EditRecord", "changed_paths"]


@dataclass(frozen=True, slots=True, eq=False)
class EditRecord:
    """One hand edit, kept by the session so views, diffs and traces can say what changed.

    ``seq`` is the edit's ``SessionEdited`` event number; ``how`` the method that made it
    (``edit_result``, ``edit_call``, ``edit``, ``replace``, ``delete``, ``truncate``,
    ``repair``); ``before`` the wire dict it replaced (None for removals); ``message`` the
    message it put in place (views find edited messages by it); ``changed`` the paths that
    differ (``content``, ``content.price``, ``tool_calls[0].function.arguments.city``).
    """

    seq: int
    how: str
    index: int
    before: dict[str, Any] | None = field(repr=False)
    message: Message | None = field(repr=False)
    changed: tuple[str, ...] = ()
    call_id: str | None = None

    def describe(self) -> str:
        """One line for a timeline or a card: what was edited, where, which fields."""
        return describe_edit(self.how, self.index, self.call_id, self.changed)


def _json(value: Any) -> Any:
    """A JSON object or array held in a string, parsed; anything else unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """The paths where two JSON-like values differ, descending into JSON held in strings
    (tool results, call arguments): ``["content.price", "content.flights[1]"]``."""
    a, b = _json(before), _json(after)
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in [*a, *(k for k in b if k not in a)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append(sub)
            else:
                out += changed_paths(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            out += changed_paths(a[i], b[i], sub) if i < len(a) and i < len(b) else [sub]
        return out
    return [] if a == b else [path or "(value)"]
