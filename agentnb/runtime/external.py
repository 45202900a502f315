"""ExternalRun: the run state of a run the runtime does not drive.

A model call an app made that something watched (the recording proxy, ``agentnb.observe``)
is recorded as the runtime records its own runs, through the same :class:`RunState`: its
ids are minted there, as every run's; its events are numbered on the session's bus; its
record joins ``session.runs``; its usage is counted by ``call_model``'s rule; it stops with
``RunStopped``. Its driver holds the session's lock under ``run.id`` while it runs::

    run = ExternalRun(session, "the user's words", tags={"conversation": session.id})
    await session.lock.acquire(run.id, session.id, "reject", holder)
    run.begin()                               # its record joins session.runs
    run.stage = "restore"; run.add(message)   # each message it adds: checked, announced
    run.emit(SomeEvent, **fields)             # at run.stage and run.iteration
    run.count(usage, estimate, model)         # each model reply: the record's usage
    run.stage = "call_model"; run.conclude(reason, detail, output)  # RunStopped
    session.lock.release(run.id)

``started`` (``time.monotonic()``) is when it began, if before now: its latency counts from
there.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import AgentnbError
from ..events import RunStopped
from ..messages import Message
from ..models.base import Usage
from ..session.records import RunRecord, checked_tags
from ..session.transcript import checked
from .state import RunState

if TYPE_CHECKING:
    from ..session.session import Session

__all__ = ["ExternalRun"]


class _NotDriven:
    """The agent of a run the runtime does not drive: none."""

    name = "external"
    repeat_limit = 1


_NOT_DRIVEN = _NotDriven()


class ExternalRun(RunState):
    """The state of a run the runtime does not drive (see the module docstring)."""

    def __init__(
        self,
        session: Session,
        input: str | None,
        *,
        tags: dict[str, str] | None = None,
        started: float | None = None,
    ) -> None:
        agent: Any = _NOT_DRIVEN  # (the stages are never run on it)
        super().__init__(agent, session, None, "reject", tags=checked_tags(tags))
        self.record.input = input
        if started is not None:  # the clock starts when the run began
            now, origin = time.monotonic(), self.origin
            self.origin = replace(origin, t0=started, wall0=origin.wall0 - (now - started))

    def begin(self) -> RunRecord:
        """The run starts here: its messages begin at the session's end; its record is one of
        ``session.runs``."""
        record = self.record
        record.start = len(self.session)
        self.session.runs.append(record)
        return record

    def add(self, message: Message | dict[str, Any]) -> Message:
        """A message of an external run, checked as ``Session.append`` checks one (a value
        that is no message, or cannot be sent as JSON, changes nothing), then appended."""
        checked_message = checked(message, f"message #{len(self.session.transcript)}")
        self.append(checked_message)
        return checked_message

    def count(self, usage: Usage | None, estimate: Usage, model: str = "") -> Usage:
        """A model reply of this run, with the usage it reported (None: ``estimate`` is
        counted, marked estimated, and the call unmetered): the record's usage, model and
        calls, by the rule ``call_model`` applies inline on the runtime's own hot path."""
        record = self.record
        if usage is None:
            usage = estimate if estimate.estimated else replace(estimate, estimated=True)
            record.unmetered += 1
        tokens = self.tokens
        tokens[0] += usage.prompt_tokens
        tokens[1] += usage.completion_tokens
        tokens[2] += usage.total_tokens
        estimated = record.usage.estimated or usage.estimated
        record.usage = Usage(tokens[0], tokens[1], tokens[2], estimated)
        record.iterations += 1
        record.model = model or record.model
        return usage

    def conclude(self, reason: str, detail: str, output: str | None) -> RunRecord:
        """The run stopped, in the stage it is at: its record final (``latency`` on the
        events' clock), the session committed (a store that refuses is said in ``detail``,
        not raised), and ``RunStopped`` announced at ``persist``, as the runtime's own."""
        self.stop(reason, detail)
        self.output = output
        self.stage = "persist"
        record = self.record
        record.latency = time.monotonic() - self.origin.t0
        record.end = len(self.session)
        try:
            self.session.commit()
        except AgentnbError as exc:  # its store refused: said, not lost
            record.detail += f" (not saved: {exc})"
        self.emit(
            RunStopped,
            reason=reason,
            detail=record.detail,
            output=output,
            iterations=record.iterations,
            usage=record.usage,
            stopped_in=record.stage or self.stage,
        )
        return record
