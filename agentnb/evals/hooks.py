"""A task's hooks: its tools factory and its setup, what they may return, what they are called.

``Task(tools=factory)`` is called once per run; it returns the run's tools (a list, a tuple or
a Toolset of tools or functions) or a pair ``(tools, state)`` (``state`` is what end-state
checks read). :func:`tools_of` reads what it returned by that rule, and refuses anything
else naming the rule (a tuple of tools read as ``(tools, state)`` failed with "'Tool' object
is not iterable").
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigurationError
from ..tools import Tool, Toolset

__all__ = ["HOOKS", "TOOLS_RULE", "tools_of"]

#: What each hook of a task is called in a message.
HOOKS = {"setup": "setup function", "tools": "tools factory"}
#: The rule a tools factory's return value follows, quoted when it is broken.
TOOLS_RULE = (
    "a tools factory returns the run's tools (a list, a tuple or a Toolset of tools or "
    "functions), or a pair (tools, state)"
)


def tools_of(made: Any, task: str) -> tuple[list[Any], Any]:
    """The tools and the state a task's tools factory returned (:data:`TOOLS_RULE`): a tuple
    of tools is tools; a pair whose first item is a collection is (tools, state)."""
    state = None
    if isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], list | tuple | Toolset):
        made, state = made
    if isinstance(made, Toolset | list | tuple):
        tools = list(made)
        wrong = [t for t in tools if not (isinstance(t, Tool) or callable(t))]
        if not wrong:
            return tools, state
        why = f"it holds {type(wrong[0]).__name__} {wrong[0]!r:.60}"
    else:
        why = f"it returned {type(made).__name__} {made!r:.60}"
    raise ConfigurationError(f"task {task!r}: {TOOLS_RULE}; {why}")
