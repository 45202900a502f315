"""Calls that change the world: their idempotency keys, their approvals, and resumed rounds.

A *guarded* call is one of a tool with side effects (``@an.tool(side_effects=True)``) or one
that needs approval (``@an.tool(approval=True)`` or ``approval=fn(arguments)``). Only such
calls pass through here (``execute_tools`` checks plain attributes first: other calls pay
nothing):

- Each gets an **idempotency key**, ``<task or session id>:<message index>:<call id>:<digest>``
  (the digest of its tool and arguments): the same for this call in every retry, crash
  recovery and replay, different for every other call (:func:`idempotency_key`).
  ``ToolStarted`` carries it, and so does ``an.tools.current_call()`` inside the tool, to
  hand to the service that books or pays.
- A run that **resumes** a round cut short (see ``restore``) never runs again on its own a
  side-effecting call that may already have run (``interrupted``): it is answered
  ``uncertain`` with its key, unless the tool is ``idempotent=True`` (it dedupes by the key,
  so the call runs again with the same key).
- A call that needs **approval** asks the run's :class:`CallGuard`: approved (once: a
  second use is refused and answered ``uncertain``), denied (the model reads a ``denied``
  result with the reason), or pending: the call stays open, ``ApprovalRequested`` says so with
  the arguments' digest, and the run stops with ``awaiting_approval`` after the others of its
  round. A run without input resumes it once decided.
- Right before a side-effecting call runs, the guard's ``begin`` is told (the service writes
  it to its journal there; raising stops the call before it runs).

:class:`Approvals` is the in-memory guard for runs outside the service (a notebook's view);
``agentnb.Runtime`` keeps its approvals and journal durably in the store.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from ..errors import ApprovalError
from ..events import ApprovalRequested
from ..tools.results import UNCERTAIN, UNCERTAIN_HINT, error_content
from .state import CallOutcome

if TYPE_CHECKING:
    from ..messages import ToolCall
    from ..tools.tool import Tool
    from .state import RunState, ToolRound

__all__ = [
    "WAITING",
    "ApprovalError",
    "ApprovalRequest",
    "Approvals",
    "CallGuard",
    "admit",
    "digest",
    "idempotency_key",
]

#: The kind of a call left open because it awaits approval (it gets no result yet).
WAITING = "awaiting_approval"
Verdict = Literal["approved", "denied", "pending"]


def idempotency_key(state: RunState, tool_round: ToolRound, call: ToolCall) -> str:
    """The call's key: the task (or, outside the service, the session) it belongs to, the
    index of the assistant message that made it, its id and its arguments' digest. A resumed
    round is the same message at the same index; a session rewound and called again at the
    same place with other arguments gets another key."""
    scope = state.record.task_id or state.session.id
    name, arguments = call.function.name, call.function.arguments
    return f"{scope}:{tool_round.at}:{call.id}:{digest(name, arguments)[:12]}"


def digest(name: str, arguments: str) -> str:
    """The tool and its arguments, hashed (arguments as parsed, so spacing does not count)."""
    try:
        canonical = json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)
    except (ValueError, RecursionError):
        canonical = arguments
    return hashlib.sha256(f"{name}\n{canonical}".encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One call that waits for a yes: what a person is asked to approve."""

    call_id: str
    name: str
    arguments: str
    digest: str
    key: str


class CallGuard(Protocol):
    """What a run asks before a guarded call (``agent.start(..., guard=...)``)."""

    def decide(self, request: ApprovalRequest) -> tuple[Verdict, str]:
        """The verdict on ``request`` (recorded as pending when new) and its reason."""
        ...

    def consume(self, request: ApprovalRequest) -> bool:
        """Use an approval, at most once: False when it was used already."""
        ...

    def expires(self, request: ApprovalRequest) -> float | None:
        """When the request lapses (Unix time), or None."""
        ...

    def begin(self, call: ToolCall, key: str) -> None:
        """A side-effecting call is about to run (raise to stop it)."""
        ...


@dataclass
class Approvals:
    """The in-memory guard: approve or deny calls by id (with the digest you were shown).

    ``timeout`` seconds after a request is first seen, an undecided one is denied as expired.
    """

    timeout: float | None = None
    pending: dict[str, ApprovalRequest] = field(default_factory=dict)
    verdicts: dict[str, tuple[Verdict, str, str]] = field(default_factory=dict)
    seen: dict[str, float] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def decide(self, request: ApprovalRequest) -> tuple[Verdict, str]:
        found = self.verdicts.get(request.key)
        if found is not None and found[2] == request.digest:
            return found[0], found[1]
        first = self.seen.setdefault(request.key, time.time())
        if self.timeout is not None and time.time() > first + self.timeout:
            return "denied", f"the approval request expired after {self.timeout:g} s"
        self.pending[request.call_id] = request
        return "pending", ""

    def consume(self, request: ApprovalRequest) -> bool:
        if request.key in self.used:
            return False
        self.used.add(request.key)
        return True

    def expires(self, request: ApprovalRequest) -> float | None:
        first = self.seen.get(request.key)
        return None if first is None or self.timeout is None else first + self.timeout

    def begin(self, call: ToolCall, key: str) -> None:
        return None

    def approve(self, call_id: str, *, digest: str) -> None:
        """Say yes to the waiting call ``call_id`` (``digest``: the one you were shown)."""
        self._decide(call_id, digest, "approved", "")

    def deny(self, call_id: str, reason: str = "denied", *, digest: str | None = None) -> None:
        """Say no: the model reads a ``denied`` result with ``reason``."""
        self._decide(call_id, digest, "denied", reason)

    def _decide(self, call_id: str, given: str | None, verdict: Verdict, reason: str) -> None:
        request = self.pending.get(call_id)
        if request is None:
            raise ApprovalError(f"no call {call_id!r} awaits approval here")
        if given is not None and given != request.digest:
            raise ApprovalError(
                f"call {call_id} has other arguments than the ones approved (digest "
                f"{given[:12]}… given, {request.digest[:12]}… now): look at it again"
            )
        expiry = self.expires(request)
        if expiry is not None and time.time() > expiry:
            raise ApprovalError(f"the approval request of call {call_id} has expired")
        self.verdicts[request.key] = (verdict, reason, request.digest)
        del self.pending[call_id]


def needs_approval(tool: Tool, arguments: str) -> bool:
    rule = tool.approval
    if not callable(rule):
        return bool(rule)
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):
        return True  # unreadable arguments fail validation anyway; ask rather than guess
    return bool(rule(args if isinstance(args, dict) else {}))


def admit(
    state: RunState, tool_round: ToolRound, call: ToolCall, tool: Tool, key: str
) -> CallOutcome | None:
    """None: run the call now (its guard was told). Otherwise the outcome that settles it:
    ``uncertain`` (it may have run before a crash), ``denied``, or ``WAITING`` (left open)."""
    effects = state.agent.tools.has_side_effects(call.function.name)
    if effects and call.id in state.interrupted and not tool.idempotent:
        return _answered(call, "uncertain", UNCERTAIN, UNCERTAIN_HINT, key)
    guard = state.guard
    if needs_approval(tool, call.function.arguments):
        request = ApprovalRequest(
            call.id,
            call.function.name,
            call.function.arguments,
            digest(call.function.name, call.function.arguments),
            key,
        )
        verdict, reason = guard.decide(request) if guard is not None else ("pending", "")
        if verdict == "denied":
            return _answered(call, "denied", reason or "denied", _DENIED_HINT, key)
        if verdict == "pending":
            expires = guard.expires(request) if guard is not None else None
            state.emit(
                ApprovalRequested,
                call_id=call.id,
                name=request.name,
                arguments=request.arguments,
                digest=request.digest,
                idempotency_key=key,
                expires=expires,
            )
            state.awaiting.append(request)
            tool_round.outcomes[call.id] = waiting = CallOutcome("", False, WAITING)
            return waiting
        if guard is not None and not guard.consume(request):  # approved, used once already
            return _answered(call, "uncertain", UNCERTAIN, UNCERTAIN_HINT, key)
    if effects:
        if guard is not None:
            guard.begin(call, key)
        state.begun[(tool_round.at, call.id)] = key
    return None


_DENIED_HINT = "the user did not allow this call: do not repeat it; tell the user or do without"


def _answered(call: ToolCall, kind: str, error: str, hint: str, key: str) -> CallOutcome:
    content = error_content(error, hint, kind=kind, call=call.id, idempotency_key=key)
    return CallOutcome(content, False, kind)
