"""The event bus of a session: one ``seq`` counter, and the subscribers that hear every event.

Run events and edits made outside runs are numbered by the same counter, so a view that
subscribes sees one ordered stream. A subscriber that raises never stops a run: its error is
reported as a :class:`SubscriberError` warning naming the callback.

:data:`OBSERVERS` are process-wide listeners that hear every event of every session, after
its subscribers: the explicit opt-ins ``an.log(...)`` and ``an.observe.instrument(...)`` add
one each (:func:`add_observer`). The list is empty unless the user switches one on.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from ..events import Event, Origin

__all__ = ["OBSERVERS", "Emit", "EventBus", "Recording", "SubscriberError", "add_observer"]

E = TypeVar("E", bound=Event)


class SubscriberError(RuntimeWarning):
    """A session subscriber raised; the run went on. The warning names the callback."""


#: Called with every event of every session after its subscribers (see the module docstring).
OBSERVERS: list[Callable[[Event], Any]] = []


def add_observer(callback: Callable[[Event], Any]) -> Callable[[], None]:
    """Hear every event of every session from now on; returns the function that stops it."""
    OBSERVERS.append(callback)

    def remove() -> None:
        if callback in OBSERVERS:
            OBSERVERS.remove(callback)

    return remove


class Recording(Protocol):
    """What :meth:`EventBus.record` reads of a run (its ``RunState``)."""

    origin: Origin
    stage: str
    iteration: int
    events: list[Event]
    sinks: list[Callable[[Event], Any]]


class Emit(Protocol):
    """``state.emit(EventType, at=None, **fields)``: :meth:`EventBus.record` bound to a run."""

    def __call__(self, cls: type[E], at: float | None = None, /, **fields: Any) -> E: ...


class EventBus:
    """One ``seq`` counter and the subscribers of a session.

    :meth:`emit` and :meth:`record` are the only code that numbers and publishes events:
    edits (through ``Session``) call the first, the stages the second (``state.emit`` is
    ``record`` bound to the run: one call per event on the hot path).
    """

    __slots__ = ("seq", "subscribers")

    def __init__(self) -> None:
        self.seq = 0
        self.subscribers: list[Callable[[Event], Any]] = []

    def continue_after(self, seq: int) -> None:
        """Number the next event after ``seq``, the last one a session's earlier events carry
        (written by another process, before a crash): ``seq`` is monotonic per session, not
        per process."""
        self.seq = max(self.seq, seq)

    def emit(
        self,
        cls: type[Event],
        origin: Origin,
        stage: str,
        iteration: int,
        at: float,
        fields: dict[str, Any],
    ) -> Event:
        """Number a new event of type ``cls`` and publish it to every subscriber."""
        self.seq += 1
        event = cls(self.seq, stage, iteration, at, origin, **fields)
        if self.subscribers or OBSERVERS:
            self._publish(event)
        return event

    def record(self, run: Recording, cls: type[E], at: float | None = None, /, **fields: Any) -> E:
        """An event of ``run`` at its stage and iteration, numbered and published like
        :meth:`emit`, then kept in the run's ``events`` and handed to its ``sinks``.

        ``at`` is the event's monotonic time when the caller has just read the clock."""
        self.seq += 1
        now = time.monotonic() if at is None else at
        event = cls(self.seq, run.stage, run.iteration, now, run.origin, **fields)
        if self.subscribers or OBSERVERS:
            self._publish(event)
        run.events.append(event)
        for sink in run.sinks:
            sink(event)
        return event

    def _publish(self, event: Event) -> None:
        for callback in [*self.subscribers, *OBSERVERS]:
            try:
                callback(event)
            except Exception as exc:
                warnings.warn(
                    f"session subscriber {callback!r} raised {type(exc).__name__}: {exc}",
                    SubscriberError,
                    stacklevel=3,
                )
