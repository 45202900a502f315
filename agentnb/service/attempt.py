"""One attempt of a task: one run of the agent, resuming whatever a crash cut short.

Shared by every backend. An attempt is idempotent over the store: it starts from the session
as last committed (the end of a tool round, or of a run), so it never repeats a round that
landed. Before a side-effecting call runs, the task log records it (a synchronous write,
before the tool is invoked: :class:`TaskGuard`). If the worker dies before that round is
committed, the next attempt puts the round's assistant message back and *resumes* it as a run
of its own (the runtime's resume: the loop enters at ``execute_tools``): the journalled
side-effecting calls are answered ``uncertain`` ("this call may or may not have happened;
check before repeating"), shown in the view and to the model, never run again on their own;
calls without side effects run again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events import Event
from ..messages import AssistantMessage
from ..session import RunRecord
from .tasks import LOST

if TYPE_CHECKING:
    from ..agent import Agent
    from ..messages import ToolCall
    from ..runtime import ApprovalRequest, Run, RunResult, Verdict
    from ..session import Session
    from .journal import TaskLog
    from .tasks import Status, TaskState

__all__ = [
    "LOST",
    "MAX_LOST",
    "Abandoned",
    "TaskGuard",
    "answered",
    "close_lost",
    "finish_attempt",
    "interrupted_round",
    "start_attempt",
    "status_of",
]

Sink = Callable[[Event], Any]

#: Attempts lost to a dead worker before a task is given up (one that kills its process):
#: ``Runtime(max_lost=...)``.
MAX_LOST = 5


class Abandoned(Exception):
    """The task's workers died under it ``max_lost`` times: it is not run again."""


class TaskGuard:
    """The run's guard for one task (see :mod:`agentnb.runtime.guard`): each side-effecting
    call is written to the task log before the tool is invoked (``begin``); approvals are
    asked of, decided in and used from the log (:mod:`.approvals`)."""

    def __init__(self, session: Session, log: TaskLog, task_id: str, timeout: float | None) -> None:
        self.session, self.log, self.task_id, self.timeout = session, log, task_id, timeout
        self.expiry: dict[str, float | None] = {}

    def begin(self, call: ToolCall, key: str) -> None:
        # The round's messages are committed before its call is journalled: the turn's user
        # message too when this is its first round (a crash otherwise lost it, and recovery
        # rebuilt the round one index lower, under another idempotency key).
        self.session.commit()
        transcript = self.session.transcript
        at = transcript.open_at
        assistant = transcript.messages[at].wire() if at is not None else {}
        self.log.begin_call(
            self.task_id,
            self.session.id,
            self.session.version,
            call.id,
            call.function.name,
            assistant,
        )

    def decide(self, request: ApprovalRequest) -> tuple[Verdict, str]:
        book = self.log.approvals
        verdict, reason, expires = book.ask(self.task_id, self.session.id, request, self.timeout)
        self.expiry[request.key] = expires
        return verdict, reason

    def consume(self, request: ApprovalRequest) -> bool:
        return self.log.approvals.use(request.key)

    def expires(self, request: ApprovalRequest) -> float | None:
        return self.expiry.get(request.key)


def interrupted_round(session: Session, log: TaskLog, task_id: str) -> frozenset[str]:
    """Put back the round a crash interrupted; the ids of its calls that may have started.

    A side-effecting call is journalled (with its round's assistant message and the session
    version the round builds on) before it runs. If that round never landed, the store still
    holds that version: the assistant message goes back into the session (committed, so a
    second crash finds it there), and its journalled calls are the interrupted ones. If the
    session already ends in open calls, the journalled calls of that message are. (Call ids
    are no key: models reuse "call_0" in every turn.)
    """
    rows = log.open_calls(task_id)
    if not rows:
        return frozenset()
    at = session.transcript.open_at
    if at is None:
        live = [r for r in rows if r["version"] == session.version]
        if not live:
            return frozenset()  # the round landed: its results are in the session
        session.append(live[-1]["assistant"])
        at = len(session) - 1
    wire = session.transcript.messages[at].wire()
    return frozenset(r["call_id"] for r in rows if r["assistant"] == wire)


def answered(session: Session, task: TaskState) -> RunRecord | None:
    """The record of the task's answer if it is committed already: the worker that wrote it
    stopped before recording its run's end. That run's record (left open in ``task.runs``)
    is completed; nothing is left to run. None when there is no answer, or no record of the
    run that made it (the next attempt runs)."""
    messages = session.transcript.messages
    start = task.start_len
    if start is None or len(messages) <= start + 1 or not session.is_valid:
        return None
    last = messages[-1]
    if not isinstance(last, AssistantMessage) or last.tool_calls:
        return None
    record = task.runs[-1] if task.runs else None
    if record is None or record.stop_reason not in (None, "final_answer"):
        return None
    if record.stop_reason is None:
        record.end = len(messages)
        record.output = last.text or ""
        record.stop_reason = "final_answer"
        record.stage = "persist"
        record.detail = "the answer was committed before the worker that ran it stopped"
    return record


def close_lost(task: TaskState, max_lost: int = MAX_LOST) -> None:
    """Before a new attempt: an attempt whose worker died ended where its last round did (its
    runs' records say ``LOST``); :class:`Abandoned` when that happened ``max_lost`` times."""
    for record in task.runs:
        if record.stop_reason is None:
            record.stop_reason = "error"
            record.detail = LOST
    lost = len({r.tags.get("attempt", r.run_id) for r in task.runs if r.detail == LOST})
    if lost >= max_lost:
        raise Abandoned(
            f"its worker stopped {lost} times while running it (a task that kills its process?):"
            " it is not run again"
        )


def start_attempt(
    agent: Agent,
    session: Session,
    log: TaskLog,
    task: TaskState,
    sinks: list[Sink],
    approval_timeout: float | None = None,
    max_lost: int = MAX_LOST,
) -> Run | RunRecord:
    """The run of the task's next attempt (not started yet: ``await run.finish()`` or step
    it), or the record of the task's answer when it is already there (see :func:`answered`).
    The run's record joins ``task.runs`` at once, tagged with the task's tags, its
    ``task_id`` and its ``attempt``, under the task's trace (its first run's)."""
    if session.transcript.open_at is None:  # (a round in flight is never an answer)
        done = answered(session, task)
        if done is not None:
            return done
    close_lost(task, max_lost)
    interrupted = interrupted_round(session, log, task.id)
    assert task.start_len is not None
    text = task.text if len(session) <= task.start_len else None  # the input landed already
    run = agent.start(
        text,
        session=session,
        task_id=task.id,
        trace_id=task.trace_id or None,
        interrupted=interrupted,
        guard=TaskGuard(session, log, task.id, approval_timeout),
        tags=task.run_tags(),
    )
    run.state.sinks.extend(sinks)
    task.runs.append(run.record)
    return run


def status_of(result: RunResult) -> Status:
    """The task's status after an attempt: done, error, cancelled, or awaiting_approval."""
    reason = result.stop_reason
    if reason == "cancelled":
        return "cancelled"
    if reason == "awaiting_approval":
        return "awaiting_approval"
    return "error" if reason == "error" or result.error is not None else "done"


async def finish_attempt(run: Run) -> RunResult:
    """Drive the run to its end; its result, also when it failed (the error rides along)."""
    try:
        return await run.finish()
    except Exception:  # the run closed itself first: its result and error are attached
        assert run.result is not None
        return run.result
