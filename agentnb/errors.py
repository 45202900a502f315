"""Developer-facing exceptions: one tree, every message says what went wrong and what to do.

Errors the *model* should see (bad arguments, unknown tools, tool exceptions and timeouts)
never arrive here: the runtime turns them into structured tool results. What is raised is
for the developer::

    AgentnbError
    ├── ConfigurationError          an Agent, tool or model set up wrongly
    │   └── ToolDefinitionError     a function @tool cannot describe, or a duplicate name
    ├── InvalidMessage              a dict or object that is not an OpenAI chat message
    ├── InvalidConversation         a session that breaks tool-call pairing, sent to a model
    ├── SessionBusy                 a second run on a session that is already running
    ├── RunStateError               a stepper used out of order, run_sync inside an event loop
    └── ModelError                  the model could not produce a reply
        ├── ModelCallFailed         the model raised; the original is the __cause__
        ├── ModelResponseError      the reply is not a valid assistant message
        ├── UnexpectedModelCall     a ScriptedModel called past the end of its script
        └── ScriptNotConsumed       ScriptedModel.assert_complete() with replies left over

A run that fails raises after it has repaired the session (every tool call answered) and
recorded a ``RunStopped(reason="error")`` event; the partial result is ``exc.result``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentnbError",
    "ConfigurationError",
    "InvalidConversation",
    "InvalidMessage",
    "ModelCallFailed",
    "ModelError",
    "ModelResponseError",
    "RunStateError",
    "ScriptNotConsumed",
    "SessionBusy",
    "ToolDefinitionError",
    "UnexpectedModelCall",
]


class AgentnbError(Exception):
    """Base of every exception agentnb raises on purpose."""

    #: The partial :class:`~agentnb.RunResult` when the error ended a run, else ``None``.
    result: Any = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigurationError(AgentnbError):
    """An agent, tool or model is set up in a way that cannot work."""


class ToolDefinitionError(ConfigurationError):
    """A function cannot become a tool (missing annotations, bad name, duplicate name)."""


class InvalidMessage(AgentnbError, ValueError):
    """A value is not a valid OpenAI chat message."""


class InvalidConversation(AgentnbError):
    """A transcript breaks invariant 2 (every tool call answered exactly once, in place)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class SessionBusy(AgentnbError):
    """A run was asked for on a session that another run holds."""

    def __init__(self, message: str, session_id: str, holder: str | None) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.holder = holder


class RunStateError(AgentnbError):
    """A run or stepper was used out of order (step after the end, run_sync in a loop)."""


class ModelError(AgentnbError):
    """The model did not produce a usable reply."""


class ModelCallFailed(ModelError):
    """The model raised an exception; the original exception is ``__cause__``."""


class ModelResponseError(ModelError):
    """The model answered with something that is not a valid assistant message."""


class UnexpectedModelCall(ModelError):
    """A ScriptedModel was called more times than it has replies."""


class ScriptNotConsumed(AgentnbError, AssertionError):
    """ScriptedModel.assert_complete() found replies that were never requested."""
