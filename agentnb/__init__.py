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

from . import events, models, provenance
from .agent import Agent
from .context.memory import Memory
from .context.policies import ContextPolicy, DropOldest, KeepAll, KeepLastTurns
from .context.summarise import DeterministicSummariser, ModelSummariser, SummariseOldest
from .errors import (
    AgentnbError,
    CassetteMiss,
    ConfigurationError,
    InvalidConversation,
    InvalidMessage,
    ModelCallFailed,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelStreamError,
    RunStateError,
    ScriptNotConsumed,
    SessionBusy,
    SessionConflict,
    SessionNotFound,
    StoreError,
    ToolDefinitionError,
    TraceFormatError,
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
from .runtime import Run, RunResult, RunView
from .session.session import MemoryStore, Session
from .session.store import Store
from .storage.sqlite import SQLiteStore
from .storage.trace import Trace
from .tokens import HeuristicTokenizer, Tokenizer
from .tools.tool import ERROR_KINDS, Tool, ToolError, tool
from .tools.toolset import Toolset

__version__ = "0.1.0"

__all__ = [
    "ERROR_KINDS",
    "STAGES",
    "STOP_REASONS",
    "Agent",
    "AgentnbError",
    "AssistantMessage",
    "CassetteMiss",
    "ConfigurationError",
    "ContextPolicy",
    "DeterministicSummariser",
    "DropOldest",
    "Evaluation",
    "HeuristicTokenizer",
    "InvalidConversation",
    "InvalidMessage",
    "KeepAll",
    "KeepLastTurns",
    "Memory",
    "MemoryStore",
    "ModelCallFailed",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "ModelStreamError",
    "ModelSummariser",
    "QueueFull",
    "Run",
    "RunResult",
    "RunStateError",
    "RunView",
    "Runtime",
    "SQLiteStore",
    "ScriptNotConsumed",
    "Session",
    "SessionBusy",
    "SessionConflict",
    "SessionNotFound",
    "Store",
    "StoreError",
    "SummariseOldest",
    "SystemMessage",
    "Task",
    "TaskInfo",
    "TaskNotFound",
    "TaskSet",
    "Tokenizer",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolError",
    "ToolMessage",
    "ToolRecording",
    "Toolset",
    "Trace",
    "TraceFormatError",
    "UnexpectedModelCall",
    "User",
    "UserMessage",
    "__version__",
    "checks",
    "evals",
    "evaluate",
    "events",
    "log",
    "models",
    "observe",
    "optimize",
    "parse_message",
    "provenance",
    "testing",
    "tool",
    "travel",
]

# Public names show their public path in reprs and tracebacks (as httpx does).
for _name in __all__:
    _obj = globals().get(_name)
    if isinstance(_obj, type):
        _obj.__module__ = "agentnb"


#: Prompt tuning (agentnb.evals) loads on first use too: ``an.evaluate``, ``an.Task``, ...
_EVALS = (
    "Evaluation", "Task", "TaskSet", "ToolRecording", "User", "checks", "evaluate", "optimize",
)  # fmt: skip
#: ... and so does the service (agentnb.service): ``an.Runtime`` and its errors.
_SERVICE = ("QueueFull", "Runtime", "TaskInfo", "TaskNotFound")


def __getattr__(name: str) -> Any:
    # `an.travel` pulls in pandas and the dataset, `an.widgets` ipywidgets: load on first use.
    if name in ("travel", "testing", "observe", "evals"):
        return importlib.import_module(f".{name}", __name__)
    if name == "log":  # an.log(level=...): agentnb.observe.logs.log
        return importlib.import_module(".observe", __name__).log
    if name in _EVALS or name in _SERVICE:
        package = ".evals" if name in _EVALS else ".service"
        value = getattr(importlib.import_module(package, __name__), name)
        if isinstance(value, type):
            value.__module__ = "agentnb"  # the public path in reprs, as for the names above
        globals()[name] = value
        return value
    if name == "widgets":
        try:
            return importlib.import_module(".widgets", __name__)
        except ImportError as exc:
            raise AttributeError(
                f"agentnb.widgets is unavailable ({exc}); install the live view with "
                "pip install 'agentnb[widgets]'"
            ) from None
    raise AttributeError(f"module 'agentnb' has no attribute {name!r}")
