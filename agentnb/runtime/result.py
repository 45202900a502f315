"""RunResult: what a run produced, and why it stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..display import Shown, transcript_bundle
from ..events import Event
from ..messages import Message, ToolCall
from ..session.records import RunRecord
from ..storage.trace import Trace

if TYPE_CHECKING:
    from ..session.session import Session

__all__ = ["RunRecord", "RunResult"]


@dataclass
class RunResult(Shown):
    """What a run produced, and why it stopped (read from its :class:`RunRecord`)."""

    record: RunRecord
    session: Session
    events: list[Event]
    messages: list[Message] = field(default_factory=list)
    error: BaseException | None = None

    output = property(lambda self: self.record.output)
    #: The final answer validated into the agent's ``output_type`` (None without one, or
    #: when it was not valid: see ``stop_reason`` ``invalid_output``).
    value = property(lambda self: self.record.value)
    stop_reason = property(lambda self: self.record.stop_reason or "error")
    stop_detail = property(lambda self: self.record.detail)
    run_id = property(lambda self: self.record.run_id)
    trace_id = property(lambda self: self.record.trace_id)
    iterations = property(lambda self: self.record.iterations)
    usage = property(lambda self: self.record.usage)

    @property
    def trace(self) -> Trace:
        """The events as a :class:`~agentnb.storage.trace.Trace` (DataFrame, JSONL)."""
        return Trace(self.events)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the model made in this run, in order."""
        return [c for m in self.messages for c in (getattr(m, "tool_calls", None) or ())]

    def __repr__(self) -> str:
        out = (self.output or "").replace("\n", " ")
        out = out if len(out) < 80 else out[:77] + "..."
        return (
            f"<RunResult {self.stop_reason}: {self.iterations} model calls, "
            f"{len(self.tool_calls)} tool calls, {self.usage.total_tokens} tokens; {out!r}>"
        )

    def static_bundle(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """The run's messages (:func:`agentnb.display.transcript_bundle`), its stop in the
        title, flagged spans and steered calls marked (traced in its session, as far as the
        run's messages are still where the run left them; else the title says they are not)."""
        title = f"{self!r} — stop_reason={self.stop_reason}: {self.stop_detail}"
        wires = [m.wire() for m in self.messages]
        first = self.record.start or 0
        held = self.session.transcript.messages[first : first + len(self.messages)]
        kept = len(held) == len(self.messages) and all(
            a is b for a, b in zip(held, self.messages, strict=True)
        )
        if not kept:
            title += " (provenance not marked: the session was edited since this run)"

        def marks(start: int, end: int) -> dict[int, dict[str, Any]]:
            return self.session.static_marks(start, end) if kept else {}

        return transcript_bundle(
            self.messages,
            wires,
            title=title,
            first=first,
            marks=marks,
            include=include,
            exclude=exclude,
        )
