"""RunState: what the stages of one run share — ids, events, usage, the stop record.

The stages are functions of a ``RunState`` and their typed inputs (see ``loop.py``); they
change the session only through :meth:`RunState.append` and friends, so every message that
enters the transcript is announced by a ``MessageAppended`` event with the session's ``seq``.

A run the runtime does not drive (a call the recording proxy watched) is recorded through
the same state: :class:`~.external.ExternalRun`, so its ids, events, record, usage and stop
are made the way every run's are.
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..events import Event, MessageAppended, Origin, ToolFinished, ToolStarted
from ..messages import Message, ToolCall, ToolMessage
from ..models.base import Usage
from ..session.bus import Emit
from ..session.ids import new_run_id, new_trace_id
from ..session.records import RunRecord
from ..tools.results import UNCERTAIN_HINT
from ..tools.tool import error_content

if TYPE_CHECKING:
    from ..agent import Agent
    from ..session.lock import ActiveRun, LockPolicy
    from ..session.session import Session
    from .guard import ApprovalRequest, CallGuard

__all__ = ["CallOutcome", "RunState", "ToolRound"]


@dataclass(slots=True)
class CallOutcome:
    """What one call produced: the content the model sees, and how it went."""

    content: str
    ok: bool = True
    kind: str | None = None
    latency: float = 0.0
    #: For the developer: where a tool that raised failed (its own frames) ...
    traceback: str | None = None
    #: ... or what to know of a result that is still ok (a value sent as its ``str()``).
    note: str | None = None


@dataclass(slots=True)
class ToolRound:
    """The outcomes of the calls of one assistant message (at index ``at``), by call id.

    Keyed per message: a model that reuses ``call_0`` in a later turn never gets an earlier
    turn's result.
    """

    at: int
    outcomes: dict[str, CallOutcome] = field(default_factory=dict)


class RunState:
    """The state the stages of one run share (and, as :class:`~.external.ExternalRun`, of a
    run the runtime only records)."""

    def __init__(
        self,
        agent: Agent,
        session: Session,
        input: Message | None,
        lock_policy: LockPolicy,
        *,
        task_id: str | None = None,
        trace_id: str | None = None,
        interrupted: frozenset[str] = frozenset(),
        guard: CallGuard | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        self.agent = agent
        self.session = session
        self.input = input
        self.lock_policy: LockPolicy = lock_policy
        self.id = new_run_id()  # (with new_trace_id below: the one place run ids are made)
        #: 128 random bits, as a uuid4's hex; or the trace this run belongs to (a service task
        #: runs each attempt under the task's one trace id).
        self.trace_id = trace_id or new_trace_id()
        self.origin = Origin(
            session.id, self.id, self.trace_id, time.monotonic(), time.time(), task_id
        )
        self.events: list[Event] = []
        self.sinks: list[Callable[[Event], Any]] = []
        #: ``emit(EventType, at=None, **fields)``: an event of this run, numbered on the
        #: session's bus, published and kept (``EventBus.record`` bound to this state; ``at``
        #: is its monotonic time when the caller has just read the clock).
        self.emit: Emit = partial(session.bus.record, weakref.proxy(self))  # no state cycle
        self.stage = "restore"
        self.iteration = 0
        #: The run's tokens so far (prompt, completion, total), summed without new objects;
        #: ``call_model`` sets the record's ``usage`` from them after every call.
        self.tokens = [0, 0, 0]
        self.cancel_requested = False
        self.round: ToolRound | None = None
        #: Ids of the open calls this run resumes that may have started before the run that
        #: made them was stopped (a crash): side-effecting ones are answered ``uncertain``.
        self.interrupted = interrupted
        #: What guarded calls ask first (approvals; the service's journal): see ``guard``.
        self.guard = guard
        #: The calls of this round that wait for approval (the run stops after the round).
        self.awaiting: list[ApprovalRequest] = []
        #: Side-effecting calls that began to run, by (message index, call id), with their
        #: keys: cut short, they are answered ``uncertain``, never ``cancelled``.
        self.begun: dict[tuple[int | None, str], str] = {}
        #: The last ``repeat_limit`` executed calls as (name, parsed arguments).
        self.actions: deque[tuple[str, Any]] = deque(maxlen=max(agent.repeat_limit, 1))
        #: The run's outcome; in ``session.runs`` from ``restore`` on.
        self.record = RunRecord(
            self.id,
            self.trace_id,
            None if input is None else input.text,
            task_id=task_id,
            tags={} if tags is None else tags,
        )
        self.error: BaseException | None = None
        #: Final answers checked against the agent's output type so far (``decide``).
        self.output_attempts = 0
        #: Standing repairs about the history already reported in this run (``decide``).
        self.said: set[str] = set()
        #: The Run driving this state, weakly (no run <-> state cycle): ``restore`` gives it to
        #: the session's lock, whose hold is the one strong link while the run holds the session.
        self.run_ref: Callable[[], ActiveRun | None] = lambda: None

    # -- events and messages ---------------------------------------------------------------
    def append(self, message: Message) -> None:
        index = self.session.transcript.add(message)
        self.emit(MessageAppended, index=index, message=message)

    def answer(self, call: ToolCall, content: str) -> None:
        """Append the tool message that answers ``call``."""
        self.append(ToolMessage.answer(call.id, call.function.name, content))

    def answer_open(self, kind: str, why: str) -> None:
        """Answer every open call: its finished outcome if it has one, else ``kind``."""
        transcript = self.session.transcript
        done = self.round.outcomes if self.round and self.round.at == transcript.open_at else {}
        # Invariant 8: a call that started is never reported as not run.
        waiting = {r.call_id for r in self.awaiting}  # asked for approval, never run
        started = {
            e.call_id
            for e in self.events
            if type(e) is ToolStarted and e.iteration == self.iteration
        } - waiting
        for call in transcript.open_calls():
            outcome = done.get(call.id)
            if outcome is None:
                hint = (
                    "this call was interrupted while it ran: it may or may not have taken "
                    "effect; check before repeating it"
                    if call.id in started
                    else "this call did not run; do not assume its result"
                )
                said = kind
                key = self.begun.get((transcript.open_at, call.id))
                if key is not None:  # it changes the world and was running: uncertain, keyed
                    said, error = "uncertain", f"this call may or may not have happened ({why})"
                    content = error_content(error, UNCERTAIN_HINT, kind=said, idempotency_key=key)
                else:
                    content = error_content(f"{kind.replace('_', ' ')}: {why}", hint, kind=kind)
                self.emit(
                    ToolFinished,
                    call_id=call.id,
                    name=call.function.name,
                    ok=False,
                    content=content,
                    latency=0.0,
                    kind=said,
                )
            else:
                content = outcome.content
            self.answer(call, content)

    # -- usage and stopping ----------------------------------------------------------------
    @property
    def usage(self) -> Usage:
        """Tokens used by this run's model calls so far (its record's, kept live)."""
        return self.record.usage

    # The outcome lives in the record; these read and write it there.
    @property
    def output(self) -> str | None:
        return self.record.output

    @output.setter
    def output(self, text: str | None) -> None:
        self.record.output = text

    @property
    def stop_reason(self) -> str | None:
        return self.record.stop_reason

    @property
    def stop_detail(self) -> str:
        return self.record.detail

    @property
    def start_index(self) -> int:
        """Where this run's messages begin in the transcript (its record's ``start``)."""
        start = self.record.start
        return len(self.session) if start is None else start

    @property
    def restored(self) -> bool:
        """True once the run holds its session (``restore`` passed)."""
        return self.record.start is not None

    def stop(self, reason: str, detail: str) -> None:
        record = self.record
        record.stop_reason = reason
        record.detail = detail
        record.stage = self.stage

    def close_record(self) -> RunRecord:
        """The record's final figures, at the run's end."""
        record = self.record
        record.iterations = self.iteration
        record.latency = time.monotonic() - self.origin.t0
        return record
