"""The event bus of a session: one ``seq`` counter, and the subscribers that hear every event.

Run events and edits made outside runs are numbered by the same counter, so a view that
subscribes sees one ordered stream. A subscriber that raises never stops a run: its error is
reported as a :class:`SubscriberError` warning naming the callback.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..events import Event

__all__ = ["EventBus", "SubscriberError"]


class SubscriberError(RuntimeWarning):
    """A session subscriber raised; the run went on. The warning names the callback."""


class EventBus:
    """One ``seq`` counter and the subscribers of a session."""

    __slots__ = ("seq", "subscribers")

    def __init__(self) -> None:
        self.seq = 0
        self.subscribers: list[Callable[[Event], Any]] = []

    def publish(self, event: Event) -> None:
        for callback in list(self.subscribers):
            try:
                callback(event)
            except Exception as exc:
                warnings.warn(
                    f"session subscriber {callback!r} raised {type(exc).__name__}: {exc}",
                    SubscriberError,
                    stacklevel=3,
                )
