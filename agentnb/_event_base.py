"""The base of every event: the common fields, the clock anchor, and the dict codec."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from .messages import parse_message
from .models.base import ModelRequest, Usage

__all__ = ["Event", "Origin", "event_from_dict"]


def _short(text: str | None, n: int = 60) -> str:
    text = (text or "").replace("\n", " ")
    return text if len(text) <= n else text[: n - 3] + "..."


@dataclass(frozen=True, slots=True)
class Origin:
    """Where events come from: the session, the run and its trace, and the clock anchor.

    One per run (and one per session for edits made outside runs), shared by its events.
    """

    session_id: str
    run_id: str | None
    trace_id: str | None
    t0: float  # time.monotonic() at the anchor
    wall0: float  # time.time() at the same moment

    @classmethod
    def now(cls, session_id: str, run_id: str | None, trace_id: str | None) -> Origin:
        return cls(session_id, run_id, trace_id, time.monotonic(), time.time())


# Every event class is slotted and keyword-only: immutable by convention, cheap to build (a
# frozen dataclass costs ~3x more per event: each field goes through object.__setattr__).
# repr=False keeps the readable __repr__ of the base class.
@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class Event:
    """Fields every event has. Subclasses add their own."""

    seq: int
    stage: str
    iteration: int
    time: float
    origin: Origin

    @property
    def session_id(self) -> str:
        return self.origin.session_id

    @property
    def run_id(self) -> str | None:
        return self.origin.run_id

    @property
    def trace_id(self) -> str | None:
        return self.origin.trace_id

    @property
    def wall(self) -> float:
        """Unix time of the event (from the monotonic clock and the run's anchor)."""
        return self.origin.wall0 + (self.time - self.origin.t0)

    @property
    def type(self) -> str:
        return type(self).__name__

    def summary(self) -> str:
        """One readable line (used by the CLI, the trace table and reprs)."""
        return self.type

    def fields(self) -> dict[str, Any]:
        """The event-specific fields (not the common ones)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)[_COMMON:]}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with ``type``; :func:`event_from_dict` reverses it."""
        data = self.header()
        for key, value in self.fields().items():
            data[key] = _encode(value)
        return data

    def header(self) -> dict[str, Any]:
        """The common fields as a JSON-ready dict, with ``type``."""
        return {
            "type": self.type,
            "seq": self.seq,
            "stage": self.stage,
            "iteration": self.iteration,
            "time": self.time,
            "wall": self.wall,
            "session_id": self.session_id,
            "run_id": self.run_id,
            "trace_id": self.trace_id,
        }

    def __repr__(self) -> str:
        return f"<{self.seq}:{self.stage} {self.summary()}>"


_COMMON = 5


def _encode(value: Any) -> Any:
    if hasattr(value, "wire"):
        return value.wire()
    if isinstance(value, ModelRequest):
        return {"messages": value.messages, "tools": value.tools, "params": value.params}
    if isinstance(value, Usage):
        return dataclasses.asdict(value)
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    return value


_DECODERS: dict[str, Any] = {
    "message": parse_message,
    "request": lambda d: (
        d if isinstance(d, ModelRequest) else ModelRequest(d["messages"], d["tools"], d["params"])
    ),
    "dropped": lambda d: tuple(tuple(x) for x in d),
    "summarised": lambda d: tuple(tuple(x) for x in d),
    "usage": lambda d: Usage(**d),
}


def _event_types() -> dict[str, type[Event]]:
    found: dict[str, type[Event]] = {}
    todo = [Event]
    while todo:
        for sub in todo.pop().__subclasses__():
            found[sub.__name__] = sub
            todo.append(sub)
    return found


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output (e.g. a line of a JSONL trace)."""
    data = dict(data)
    cls = _event_types()[data.pop("type")]
    t = data["time"]
    data["origin"] = Origin(
        data.pop("session_id"), data.pop("run_id"), data.pop("trace_id"), t, data.pop("wall")
    )
    for key, decode in _DECODERS.items():
        if data.get(key) is not None:
            data[key] = decode(data[key])
    for key, value in data.items():
        if isinstance(value, list):
            data[key] = tuple(value)
    return cls(**data)
