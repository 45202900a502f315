"""What a view saw of the model calls: the request context (instructions and tool schemas).

It is shown first in the view and resent only when it changes. The budget of each request
is not kept here: its ``RequestRecord`` (``session.requests``) is its one home.
"""

from __future__ import annotations

from typing import Any

from . import payload

__all__ = ["RequestsSeen"]


class RequestsSeen:
    """The request context now in force."""

    def __init__(self, session: Any, agent: Any) -> None:
        self._key: Any = None
        if agent is not None:
            output = agent.output.spec if getattr(agent, "output", None) is not None else None
            self.context = payload.context(agent.system_wire(), agent.tools.schemas(), output)
        elif session.requests:
            req = session.requests[-1].request
            system = payload.system_of(req.messages)
            self.context = payload.context(system, req.tools, req.output)
        else:
            self.context = payload.context(None, [])

    def assembled(self, event: Any) -> dict[str, Any] | None:
        """The new request context if ``event``'s request changed it, else None."""
        request = event.request
        system = payload.system_of(request.messages)
        key = (id(system), id(request.tools), len(request.tools), id(request.output))
        if key == self._key:
            return None
        self._key = key
        ctx = payload.context(system, request.tools, request.output)
        if ctx == self.context:
            return None
        self.context = ctx
        return ctx
