"""Variants: an agent with some settings changed, the unit an evaluation compares.

``agent.copy(instructions=..., model=..., model_params=..., descriptions={tool: text})``
builds a new :class:`~agentnb.Agent`; the original is untouched. Tools are shared (they are
stateless descriptions of functions) except those whose description changed, which are
copied with the new text in their schema.
"""

from __future__ import annotations

import copy as _copy
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..tools import Toolset

if TYPE_CHECKING:
    from ..agent import Agent
    from ..tools import Tool

__all__ = ["SETTINGS", "variant", "with_description"]

#: The constructor arguments a copy carries over (and ``copy(**changes)`` accepts).
SETTINGS = (
    "instructions",
    "tools",
    "model",
    "name",
    "max_iterations",
    "repeat_limit",
    "token_budget",
    "stop_when",
    "final_answer_on_stop",
    "parallel_tool_calls",
    "tool_timeout",
    "model_params",
    "context_window",
    "reply_reserve",
    "context",
    "tokenizer",
)


def with_description(tool: Tool, description: str) -> Tool:
    """A copy of ``tool`` whose schema says ``description`` (the function is the same)."""
    new = _copy.copy(tool)
    new.description = description
    function = {**tool.schema["function"], "description": description}
    new.schema = {**tool.schema, "function": function}
    return new


def variant(agent: Agent, descriptions: dict[str, str] | None = None, **changes: Any) -> Agent:
    """A new agent like ``agent`` with ``changes`` (constructor arguments) applied."""
    from ..agent import Agent

    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        raise ConfigurationError(
            f"copy() got unknown settings {unknown}; it accepts {', '.join(SETTINGS)} and "
            "descriptions={tool_name: text}"
        )
    settings: dict[str, Any] = {}
    for name in SETTINGS:
        private = {"context": "_context", "tokenizer": "_tokenizer"}.get(name)
        settings[name] = agent.__dict__.get(private) if private else getattr(agent, name)
    settings["tools"] = list(agent.tools)
    settings["stop_when"] = list(agent.stop_when)
    settings["model_params"] = dict(agent.model_params)
    settings.update(changes)
    if descriptions:
        tools = list(Toolset(settings["tools"]))
        names = {t.name for t in tools}
        missing = sorted(set(descriptions) - names)
        if missing:
            raise ConfigurationError(f"descriptions= names unknown tools {missing}")
        settings["tools"] = [
            with_description(t, descriptions[t.name]) if t.name in descriptions else t
            for t in tools
        ]
    instructions = settings.pop("instructions")
    tools = settings.pop("tools")
    model = settings.pop("model")
    return Agent(instructions, tools, model, **settings)
