"""What a hand edit changed: the record a session keeps of each edit, and the paths of a
message that differ (:func:`agentnb.models.differ.changed_paths`). ``Session`` makes the
edits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..events import describe_edit
from ..messages import Message
from ..models.differ import changed_paths

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
