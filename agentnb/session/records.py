"""The records a session keeps of what happened on it: one per run, one per model request.

Each fact has one home (DESIGN invariant 7): a run's outcome is its :class:`RunRecord`, a
request and its token budget are its :class:`RequestRecord`. Events announce copies; views,
inspectors and results read these.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..models.base import ModelRequest, Usage

__all__ = ["RequestRecord", "RunRecord"]


@dataclass(slots=True)
class RunRecord:
    """The one home of a run's outcome (``session.runs``): where its messages are, what it
    answered, why and where it stopped, what it used. ``RunResult`` reads it; ``RunStopped``
    announces a copy.

    ``start`` is None until the run holds its session (a run cancelled before ``restore``
    never touched it); ``end`` is -1 until it persists.
    """

    run_id: str
    trace_id: str
    input: str | None
    start: int | None = None
    end: int = -1
    output: str | None = None
    stop_reason: str | None = None
    detail: str = ""
    #: The stage the run was in when it stopped.
    stage: str | None = None
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.time)
    #: The service's task this run is an attempt of (``agentnb.Runtime``), if any.
    task_id: str | None = None


@dataclass(slots=True)
class RequestRecord:
    """One model request of a session (``session.requests``), as ``assemble`` built it.

    ``budget`` is the token breakdown (instructions, tools, history, total; with a window:
    context_window, reply_reserve, available; memory when recalled), ``policy`` the context
    policy's name and ``note`` what it dropped or summarised. ``RequestAssembled`` announces
    the same; the request inspector reads it here. Read only by convention, like events: one
    is built per model call, and a frozen dataclass costs four times as much to build.
    """

    run_id: str | None
    iteration: int
    request: ModelRequest
    budget: dict[str, Any]
    policy: str
    note: str = ""
