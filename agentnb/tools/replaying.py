"""Replaying tools: a tool whose calls a recording answers instead of its function.

``replaying(tool, source)`` is a copy of ``tool`` (same name, schema and validation) whose
function asks ``source.answer(tool, arguments, call)``: ``tool`` is the live tool,
``arguments`` the validated keyword arguments, ``call`` the running call
(:class:`~agentnb.tools.ToolCallContext`: its id and the run's session, so the source can tell
where in the run the call sits). The source returns the recorded result, raises a
:class:`~agentnb.tools.ToolError` (kinds ``mismatch``, ``exhausted``, ``not_recorded``: the
model gets an error result), or runs the live tool itself. :func:`source_of` tells a replaying
tool from a live one, so a runner can notice when something replaced the replaying tools.

The recordings themselves (what was recorded, how a call is matched) live in
:mod:`agentnb.evals.recording`; this module only knows how a tool defers to one.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from .calls import ToolCallContext, current_call
from .tool import Tool

__all__ = ["ReplaySource", "replaying", "source_of"]


class ReplaySource(Protocol):
    """What answers a replaying tool's calls (see the module docstring)."""

    #: Whether the source may run live tools (a replaying tool is then isolated like one).
    live: bool

    async def answer(
        self, tool: Tool, arguments: dict[str, Any], call: ToolCallContext | None
    ) -> Any: ...


def replaying(tool: Tool, source: ReplaySource) -> Tool:
    """A copy of ``tool`` whose calls ``source`` answers (see the module docstring)."""
    live_tool: Tool = getattr(tool, "replaying_live", tool)  # re-wrapping: wrap the live one

    async def replay(**kwargs: Any) -> Any:
        return await source.answer(live_tool, kwargs, current_call())

    new = copy.copy(live_tool)
    new.fn = replay
    new.is_async, new.threaded, new.isolated = True, False, source.live
    new.call_context = True  # the source reads where the call sits in its run
    vars(new).update(replay_source=source, replaying_live=live_tool)
    return new


def source_of(tool: Tool) -> ReplaySource | None:
    """The source answering ``tool``'s calls, or None for a tool that runs its function."""
    source: ReplaySource | None = getattr(tool, "replay_source", None)
    return source
