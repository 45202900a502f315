"""Tools: ``@tool``, :class:`Tool`, :class:`Toolset`; schemas from signatures and docstrings;
results and their error kinds (what the model sees when a call fails)."""

from .tool import (
    ERROR_KINDS,
    Tool,
    ToolError,
    Toolset,
    describe_validation_error,
    error_content,
    to_content,
    tool,
)

__all__ = [
    "ERROR_KINDS",
    "Tool",
    "ToolError",
    "Toolset",
    "describe_validation_error",
    "error_content",
    "to_content",
    "tool",
]
