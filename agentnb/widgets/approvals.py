"""Approve / Deny in the views: the calls of a session that wait for a person.

A view shows a waiting call (its tool, its arguments' digest, when it lapses) with Approve and
Deny when it has someone to ask: an *approver*. Two kinds ship: a view with ``agent=`` drives
its runs with an in-memory :class:`~agentnb.runtime.guard.Approvals` and resumes the run once
every waiting call is decided (its :class:`~agentnb.widgets.controls.Driver`); the queue view
hands the session view of a task a :class:`TaskApprover` (``rt.approve`` / ``rt.deny``, durable,
the task resumes on its worker). The calls come from the approver, and live from the
session's ``ApprovalRequested`` events.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

__all__ = ["Approver", "TaskApprover", "Waiting"]


class Approver(Protocol):
    """Who decides a session's waiting calls."""

    def pending(self, session: Any) -> list[dict[str, Any]]:
        """The session's waiting calls: ``call_id``, ``tool``, ``arguments``, ``digest``,
        ``expires``."""
        ...

    def decide(self, session: Any, call_id: str, verdict: str, digest: str, reason: str) -> Any:
        """Approve (``verdict="approved"``) or deny the call; may return an awaitable."""
        ...


class TaskApprover:
    """The service's approvals: ``rt.approve`` / ``rt.deny`` on the task that waits."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    def pending(self, session: Any) -> list[dict[str, Any]]:
        return [p.row() for p in self.runtime.approvals() if p.session_id == session.id]

    def decide(self, session: Any, call_id: str, verdict: str, digest: str, reason: str) -> Any:
        (task_id,) = {p["task_id"] for p in self.pending(session) if p["call_id"] == call_id}
        if verdict == "approved":
            return self.runtime.approve(task_id, call_id, digest=digest)
        return self.runtime.deny(task_id, call_id, reason, digest=digest)


class Waiting:
    """The waiting calls of one view's session, and what Approve / Deny do there."""

    def __init__(self, view: Any, approver: Approver | None = None) -> None:
        self.view = view
        self.approver = approver
        self.calls: dict[str, dict[str, Any]] = {}
        self.refresh()

    def refresh(self) -> None:
        if self.approver is not None:
            self.calls = {p["call_id"]: p for p in self.approver.pending(self.view.session)}

    def payload(self) -> dict[str, Any]:
        can = self.approver is not None
        return {k: {**v, "can": can} for k, v in self.calls.items()}

    def observe(self, event: Any) -> bool:
        """Keep up with the session's events; True when the waiting calls changed."""
        kind = event.type
        if kind == "ApprovalRequested":
            self.calls[event.call_id] = {
                "call_id": event.call_id,
                "tool": event.name,
                "arguments": event.arguments,
                "digest": event.digest,
                "expires": event.expires,
            }
            return True
        if kind == "ToolFinished" and event.call_id in self.calls:
            del self.calls[event.call_id]
            return True
        return False

    def decide(self, content: dict[str, Any]) -> None:
        """An Approve or Deny click: decided by the approver, errors shown in the view."""
        if self.approver is None:
            raise RuntimeError("this view has no one to ask: open it from rt.view() or agent=")
        call_id = str(content["call"])
        verdict = "approved" if content.get("op") == "approve" else "denied"
        reason = str(content.get("reason") or "denied in the view")
        done = self.approver.decide(
            self.view.session, call_id, verdict, str(content["digest"]), reason
        )
        if asyncio.iscoroutine(done):
            task = asyncio.ensure_future(done)
            task.add_done_callback(self._decided)
        else:
            self._decided(None)

    def _decided(self, task: asyncio.Future[Any] | None) -> None:
        if task is not None and not task.cancelled() and task.exception() is not None:
            self.view.report(task.exception())
        self.refresh()
        self.view.send_waiting()
