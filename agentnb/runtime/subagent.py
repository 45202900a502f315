"""An agent as a tool of another (``agent.as_tool(name, description)``): splitting a task
into subtasks, the fix for a loop that does not converge (article 000 §5.1).

Each call runs the sub-agent on a fresh session of its own, so the parent's context holds one
tool call and its answer, not the sub-agent's whole loop. The sub-session stays reachable:
``parent_session.subsessions[id]``, where ``id`` is the call's ``ToolFinished.subsession_id``
(a view finds it there and shows it nested).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from ..session.session import Session
from ..tools.calls import current_call
from ..tools.results import ToolError
from ..tools.tool import Tool

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["subagent_tool"]

_SAFE = re.compile(r"[^A-Za-z0-9_.:-]")
Task = Annotated[str, Field(description="the subtask in full: the sub-agent sees only this")]


def subagent_tool(agent: Agent, name: str | None, description: str | None, **options: Any) -> Tool:
    async def run_subagent(task: Task) -> str:
        call = current_call()
        if call is None:  # called by hand, outside a run
            session = Session()
        else:
            parent: Session = call.session
            base = _SAFE.sub("_", f"{parent.id}.{call.call_id}")[:120]
            sid, n = base, 1
            while sid in parent.subsessions:  # a model may reuse a call id in a later turn
                n += 1
                sid = f"{base}.{n}"
            session = Session(id=sid)
            parent.subsessions[sid] = session
            call.subsession_id = sid
        result = await agent.run(task, session=session)
        output: str | None = result.output
        if output:
            return output
        raise ToolError(
            f"the sub-agent {agent.name!r} stopped without an answer ({result.stop_reason})",
            hint="answer from what you have, or give the subtask more precisely",
            data={"subsession_id": session.id},
        )

    described = description or (
        f"Hand a subtask to the {agent.name!r} agent; it works on it alone and returns its answer."
    )
    made = Tool(run_subagent, name=name or agent.name, description=described, **options)
    made.call_context = True  # it needs its call: the parent session and the call id
    return made
