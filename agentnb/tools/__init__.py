"""Tools: ``@tool``, :class:`Tool`, :class:`Toolset`; schemas from signatures, docstrings or a
JSON schema given as is; results and their error kinds (what the model sees when a call
fails); MCP servers' tools (:func:`from_mcp`, needs the ``mcp`` extra).

Public for the evaluations (``agentnb.evals``): a tool whose calls a recording answers
(:func:`replaying`, what answers it: a :class:`ReplaySource`; :func:`source_of` tells a
replaying tool from a live one), the running call (:class:`ToolCallContext`), and the
``kind`` a failed result's content names (:func:`error_kind`).
"""

from typing import Any

from .calls import ToolCallContext, current_call
from .replaying import ReplaySource, replaying, source_of
from .results import error_kind
from .tool import (
    ERROR_KINDS,
    InvalidArguments,
    Tool,
    ToolError,
    describe_validation_error,
    error_content,
    to_content,
    tool,
)
from .toolset import Toolset

__all__ = [
    "ERROR_KINDS",
    "InvalidArguments",
    "ReplaySource",
    "Tool",
    "ToolCallContext",
    "ToolError",
    "Toolset",
    "current_call",
    "describe_validation_error",
    "error_content",
    "error_kind",
    "from_mcp",
    "replaying",
    "source_of",
    "to_content",
    "tool",
]


async def from_mcp(client: Any, **options: Any) -> list[Tool]:
    """The tools of a connected MCP client (see :mod:`agentnb.tools.mcp`)."""
    from .mcp import from_mcp as load  # lazily: the mcp SDK is an optional extra

    return await load(client, **options)
