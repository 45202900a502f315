"""The call a tool is running for: ``an.tools.current_call()`` inside a tool.

For a tool with ``call_context = True`` (``Agent.as_tool`` sets it; set it on your own tool to
opt in), and for every side-effecting or approval-gated call (it carries an idempotency key),
the ``execute_tools`` stage sets it around each call (threads and tasks see it too),
so the tool can read its call id and the session it works for, and leave notes the stage puts
on the call's ``ToolFinished`` event - a sub-agent's ``subsession_id``.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["CURRENT_CALL", "ToolCallContext", "current_call"]


@dataclass(slots=True)
class ToolCallContext:
    """One running call: its id and tool name, the run's session (``session``), and what the
    tool reports back (``subsession_id``: the session a sub-agent ran in)."""

    call_id: str
    name: str
    session: Any
    run_id: str
    subsession_id: str | None = None
    #: A side-effecting call's key, the same for this call across retries, crash recovery and
    #: replays (see :func:`agentnb.runtime.guard.idempotency_key`): send it to the service
    #: that books or pays, so a call made twice takes effect once.
    idempotency_key: str | None = None


CURRENT_CALL: ContextVar[ToolCallContext | None] = ContextVar("agentnb_tool_call", default=None)


def current_call() -> ToolCallContext | None:
    """The call being executed, inside a tool with ``call_context = True``; else ``None``."""
    return CURRENT_CALL.get()
