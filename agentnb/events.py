"""Events: the record of a run, one object per thing that happened, in order.

Every event carries ``seq`` (monotonic per session: run events and edits share one counter),
``stage`` (a lifecycle stage name), ``session_id``, ``run_id``, ``trace_id``, ``iteration``
(the model call it belongs to; 0 before the first), ``time`` (monotonic seconds) and
``wall`` (Unix seconds). Token deltas (:class:`ModelDelta`) and tool lifecycle events
(:class:`ToolStarted`, :class:`ToolFinished`) are distinct types, so a view can show typing
and tool progress separately (article 000 §3.2). An event as a JSON-ready dict, and back:
:mod:`agentnb.storage.codec`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from .messages import AssistantMessage, Message
from .models.base import ModelRequest, Usage

__all__ = [
    "CONVERSATION_STOP_REASONS",
    "STAGES",
    "STOP_REASONS",
    "ApprovalRequested",
    "ContextRestored",
    "Decided",
    "Event",
    "MessageAppended",
    "ModelDelta",
    "ModelResponded",
    "Origin",
    "Persisted",
    "RequestAssembled",
    "RunStarted",
    "RunStopped",
    "SessionEdited",
    "StopChecked",
    "ToolFinished",
    "ToolStarted",
    "ToolsExecuted",
]


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
    task_id: str | None = None  # the service's task (agentnb.Runtime), when it runs one

    @classmethod
    def now(cls, session_id: str, run_id: str | None, trace_id: str | None) -> Origin:
        return cls(session_id, run_id, trace_id, time.monotonic(), time.time())


# Every event class is slotted: immutable by convention, cheap to build (a frozen dataclass
# costs ~3x more per event: each field goes through object.__setattr__). The common fields
# come first and by position (the bus fills them: a quarter cheaper than by name), each
# type's own fields by name. repr=False keeps the readable __repr__ of the base class.
@dataclass(slots=True, repr=False, eq=False)
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
    def task_id(self) -> str | None:
        return self.origin.task_id

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

    def header(self) -> dict[str, Any]:
        """The common fields as a JSON-ready dict, with ``type`` (and ``task_id`` if any)."""
        head = {
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
        if self.origin.task_id is not None:
            head["task_id"] = self.origin.task_id
        return head

    def __repr__(self) -> str:
        return f"<{self.seq}:{self.stage} {self.summary()}>"


_COMMON = 5


#: The lifecycle stages, in loop order (DESIGN.md).
STAGES = (
    "restore",
    "assemble",
    "call_model",
    "decide",
    "execute_tools",
    "check_stop",
    "persist",
)
#: Every value ``RunResult.stop_reason`` and ``RunStopped.reason`` can take.
STOP_REASONS = (
    "final_answer",
    "max_iterations",
    "repeated_action",
    "token_budget",
    "custom",
    "cancelled",
    "error",
    # a call waits for a person's yes (@an.tool(approval=...)): the session ends in its open
    # call, and a run without input resumes it once it is approved or denied
    "awaiting_approval",
    # the final answer failed the agent's output_type after output_retries corrections
    "invalid_output",
)
#: How a conversation with a simulated user stops (``agentnb.evals.Conversation``: each of its
#: turns is a run, which stops for one of the reasons above): the user said it is done, the
#: user gave up (its patience spent), the user's turns ran out; a replayed user meeting an
#: answer its recording does not hold (the replay's ``mismatch``, ``exhausted``,
#: ``not_recorded``); a turn's run that raised or was cancelled.
CONVERSATION_STOP_REASONS = (
    "user_done",
    "user_gave_up",
    "max_turns",
    "mismatch",
    "exhausted",
    "not_recorded",
    "error",
    "cancelled",
)


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class RunStarted(Event):
    """A run began: its input, the agent and the model."""

    input: str | None
    agent: str
    model: str
    #: Who serves the model, in OpenTelemetry's ``gen_ai.provider.name`` terms (``openai``
    #: for an HTTP model speaking the OpenAI API); None for a model run in this process.
    provider: str | None = None

    def summary(self) -> str:
        return f"run started: {self.agent} with {self.model}: {_short(self.input)!r}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ContextRestored(Event):
    """restore: the history was loaded and the user input appended."""

    history: int
    appended: int

    def summary(self) -> str:
        return f"restored {self.history} messages, appended {self.appended}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class MessageAppended(Event):
    """A message entered ``session.messages`` at ``index``."""

    index: int
    message: Message

    def summary(self) -> str:
        return f"+ #{self.index} {self.message!r}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class SessionEdited(Event):
    """The transcript was rewritten: ``action`` in replace / delete / truncate / repair.

    It announces a copy of the session's ``EditRecord``: ``how`` (the method: edit_result,
    edit_call, edit, replace, ...), the ``changed`` paths, the ``call_id`` edited, and
    ``before``, the wire dict replaced or removed (by reference: read only).
    """

    action: str
    index: int
    count: int
    how: str = ""
    changed: tuple[str, ...] = ()
    call_id: str | None = None
    before: dict[str, Any] | None = None

    def summary(self) -> str:
        return "session edited: " + describe_edit(
            self.how or self.action, self.index, self.call_id, self.changed
        )


def describe_edit(how: str, index: int, call_id: str | None, changed: tuple[str, ...]) -> str:
    """One line for an edit: what was edited, where, which fields changed."""
    what = f"{how} #{index}"
    if call_id:
        what += f" (call {call_id})"
    if changed:
        what += f": changed {', '.join(changed[:4])}" + (" …" if len(changed) > 4 else "")
    return what


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class RequestAssembled(Event):
    """assemble: the exact request (recorded by reference) and its token budget breakdown.

    ``policy`` names the context policy; ``dropped`` and ``summarised`` are the history index
    ranges it left out or replaced by a summary; ``note`` says so in words.
    """

    request: ModelRequest
    budget: dict[str, int]
    policy: str = "keep_all"
    dropped: tuple[tuple[int, int], ...] = ()
    summarised: tuple[tuple[int, int], ...] = ()
    note: str = ""

    def summary(self) -> str:
        return (
            f"request: {self.request.size} messages, {len(self.request.tools)} tools, "
            f"~{self.budget.get('total', 0)} tokens"
        )


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ModelDelta(Event):
    """call_model, streaming only: a text, reasoning or tool-argument fragment."""

    kind: str  # "text" | "reasoning" | "tool_call" | "tool_args" | "chunk" (no content)
    delta: str
    index: int | None = None
    call_id: str | None = None
    name: str | None = None
    #: The provider's chunk verbatim (an SSE ``data:`` payload) on the first event it produced.
    raw: str | None = None

    def summary(self) -> str:
        return f"delta {self.kind}: {self.delta!r}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ModelResponded(Event):
    """call_model: the reply, its usage, latency and finish reason."""

    message: AssistantMessage
    usage: Usage
    latency: float
    finish_reason: str | None
    #: The provider's id of this reply (``chatcmpl-…``, ``resp_…``, ``msg_…``), when it sent one.
    response_id: str | None = None
    #: The model that actually answered, as the provider named it (may differ from the
    #: requested one: ``gpt-4o`` → ``gpt-4o-2024-08-06``).
    response_model: str | None = None

    def summary(self) -> str:
        what = (
            ", ".join(c.function.name for c in self.message.calls)
            if self.message.tool_calls
            else repr(_short(self.message.text))
        )
        return (
            f"model replied ({self.latency * 1000:.1f} ms, {self.usage.total_tokens} tok): {what}"
        )


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class Decided(Event):
    """decide: ``final_answer``, ``tool_calls`` or ``empty`` (a correction is sent).

    ``reasoning`` is the reply's ``reasoning_content`` (empty if it had none); ``rules`` the
    rules it names as ``[rule]`` (the stand-in ``TravelModel`` names the rules of its table).
    ``output`` is the check of a final answer against the agent's ``output_type`` (None
    without one): the schema's ``name`` and ``strict``, ``attempt`` of ``attempts``,
    ``valid`` and the ``error`` the correction quotes."""

    decision: str
    calls: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    reasoning: str = ""
    rules: tuple[str, ...] = ()
    output: dict[str, Any] | None = None

    def summary(self) -> str:
        extra = f" [{'; '.join(self.problems)}]" if self.problems else ""
        calls = f": {', '.join(self.calls)}" if self.calls else ""
        rules = f" (rules: {', '.join(self.rules)})" if self.rules else ""
        out = self.output
        if out is not None and out.get("valid"):
            extra += f" (output {out['name']} valid, attempt {out['attempt']})"
        return f"decided {self.decision}{calls}{extra}{rules}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ToolStarted(Event):
    """execute_tools: a tool call began (arguments as the model wrote them)."""

    call_id: str
    name: str
    arguments: str
    #: A side-effecting (or approval-gated) call's key: the same for this call in every retry,
    #: recovery and replay; the tool reads it as ``an.tools.current_call().idempotency_key``.
    idempotency_key: str | None = None

    def summary(self) -> str:
        return f"tool {self.name}({_short(self.arguments, 80)}) started"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ApprovalRequested(Event):
    """execute_tools: a call waits for a person's yes or no; it has not run.

    ``digest`` is the call's tool and arguments hashed (approve with it: an approval of other
    arguments does not apply); ``expires`` the Unix time the request lapses (None: never).
    """

    call_id: str
    name: str
    arguments: str
    digest: str
    idempotency_key: str | None = None
    expires: float | None = None

    def summary(self) -> str:
        return f"tool {self.name}({_short(self.arguments, 60)}) awaits approval"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ToolFinished(Event):
    """execute_tools: a call's outcome; ``kind`` names the failure when not ``ok``.

    Kinds (:data:`agentnb.tools.ERROR_KINDS`): invalid_json, unknown_tool, invalid_arguments,
    tool_error, timeout, cancelled, not_executed, uncertain, not_recorded, mismatch,
    exhausted.
    """

    call_id: str
    name: str
    ok: bool
    content: str
    latency: float
    kind: str | None = None
    #: Where a tool that raised failed: the traceback of its own code (file and line), for
    #: the developer; the model gets only the structured error.
    traceback: str | None = None
    #: What the developer should know of a result that is still ok (a value JSON cannot hold
    #: was sent as its ``str()``).
    note: str | None = None
    #: The session a sub-agent ran in for this call (``Agent.as_tool``), reachable as
    #: ``session.subsessions[subsession_id]``; None for other tools.
    subsession_id: str | None = None

    def summary(self) -> str:
        state = "ok" if self.ok else f"FAILED ({self.kind})"
        return f"tool {self.name} {state} in {self.latency * 1000:.1f} ms: {_short(self.content)}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ToolsExecuted(Event):
    """execute_tools finished: how many calls ran, how many failed."""

    calls: int
    failed: int
    latency: float

    def summary(self) -> str:
        return f"{self.calls} tool calls done, {self.failed} failed ({self.latency * 1000:.1f} ms)"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class StopChecked(Event):
    """check_stop: the policies ran; ``stop`` says whether the loop ends here."""

    stop: bool
    reason: str | None = None
    detail: str = ""

    def summary(self) -> str:
        if self.stop:
            return f"stop: {self.reason} ({self.detail})"
        return f"continue: {self.detail}" if self.detail else "continue"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class Persisted(Event):
    """persist: the run's new messages were committed to the session (and its store)."""

    new_messages: int
    store: str | None = None
    version: int | None = None

    def summary(self) -> str:
        where = f" to {self.store} (version {self.version})" if self.store else ""
        return f"persisted {self.new_messages} new messages{where}"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class RunStopped(Event):
    """The last event of every run: why it stopped, in words, and what it produced.

    ``stopped_in`` is the stage where the stop was decided: ``check_stop`` for the stop
    policies, or the stage a cancellation or an error interrupted.
    """

    reason: str
    detail: str
    output: str | None
    iterations: int
    usage: Usage
    stopped_in: str = "check_stop"

    def summary(self) -> str:
        return f"run stopped: {self.reason} — {self.detail}"
