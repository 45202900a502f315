"""agentnb: a glass-box LLM agent runtime for Jupyter.

Every stage of the agent loop (restore → assemble → call_model → decide → execute_tools →
check_stop → persist) is visible as events, steppable with ``agent.start(...).step()``, and
editable between steps. The transcript, ``session.messages``, is the state.

    import agentnb as an

    @an.tool
    def search_weather(city: str, date: str) -> dict:
        "Weather for a city on a date."
        ...

    agent = an.Agent("You are a travel assistant.", [search_weather], model=...)
    result = await agent.run("周五北京天气怎么样？")
"""

from __future__ import annotations

import importlib
from typing import Any

from . import events, models
from .agent import Agent
from .errors import (
    AgentnbError,
    ConfigurationError,
    InvalidConversation,
    InvalidMessage,
    ModelCallFailed,
    ModelError,
    ModelResponseError,
    RunStateError,
    ScriptNotConsumed,
    SessionBusy,
    ToolDefinitionError,
    UnexpectedModelCall,
)
from .events import STAGES, STOP_REASONS
from .messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    parse_message,
)
from .runtime import Run, RunResult
from .session import Session
from .tools import Tool, ToolError, Toolset, tool
from .trace import Trace

__version__ = "0.1.0"

__all__ = [
    "STAGES",
    "STOP_REASONS",
    "Agent",
    "AgentnbError",
    "AssistantMessage",
    "ConfigurationError",
    "InvalidConversation",
    "InvalidMessage",
    "ModelCallFailed",
    "ModelError",
    "ModelResponseError",
    "Run",
    "RunResult",
    "RunStateError",
    "ScriptNotConsumed",
    "Session",
    "SessionBusy",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolError",
    "ToolMessage",
    "Toolset",
    "Trace",
    "UnexpectedModelCall",
    "UserMessage",
    "__version__",
    "events",
    "models",
    "parse_message",
    "tool",
    "travel",
]

# Public names show their public path in reprs and tracebacks (as httpx does).
for _name in __all__:
    _obj = globals().get(_name)
    if isinstance(_obj, type):
        _obj.__module__ = "agentnb"


def __getattr__(name: str) -> Any:
    # `an.travel` pulls in pandas and the dataset: load it on first use, not on import.
    if name in ("travel", "widgets"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'agentnb' has no attribute {name!r}")
