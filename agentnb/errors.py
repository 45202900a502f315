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
    ├── SessionNotFound             a store has no session with that id
    ├── SessionConflict             another writer committed the session first (versions named)
    ├── StoreError                  a store could not read or write (the cause is __cause__)
    ├── TraceFormatError            a saved trace line that cannot be read or written
    ├── RunStateError               a stepper used out of order, run_sync inside an event loop
    ├── ScriptNotConsumed           ScriptedModel.assert_complete() with replies left over
    ├── QueueFull                   the service's queue is at its bound (agentnb.service)
    ├── TaskNotFound                the service has no task with that id (agentnb.service)
    ├── ApprovalError               an approval refused: another digest, expired, decided, none
    └── ModelError                  the model could not produce a reply
        ├── ModelCallFailed         the model raised; the original is the __cause__
        ├── ModelHTTPError          an HTTP model failed after its retries (status, body, id)
        ├── ModelResponseError      the reply is not a valid assistant message
        │   └── ModelStreamError    a stream broke off or could not be parsed
        ├── CassetteMiss            a replayed request is not in the cassette
        └── UnexpectedModelCall     a ScriptedModel called past the end of its script

A run that fails raises after it has repaired the session (every tool call answered) and
recorded a ``RunStopped(reason="error")`` event; the partial result is ``exc.result``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentnbError",
    "ApprovalError",
    "CassetteMiss",
    "ConfigurationError",
    "InvalidConversation",
    "InvalidMessage",
    "ModelCallFailed",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "ModelStreamError",
    "RunStateError",
    "ScriptNotConsumed",
    "SessionBusy",
    "SessionConflict",
    "SessionNotFound",
    "StoreError",
    "ToolDefinitionError",
    "TraceFormatError",
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


class SessionNotFound(AgentnbError, KeyError):
    """A store holds no session with the given id."""

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class SessionConflict(AgentnbError):
    """Another writer committed this session first: ``expected`` was read, ``actual`` is stored."""

    def __init__(self, message: str, session_id: str, expected: int, actual: int) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.expected = expected
        self.actual = actual


class StoreError(AgentnbError):
    """A store could not read or write; the original error is ``__cause__``."""


class TraceFormatError(AgentnbError, ValueError):
    """A trace could not be written, or a saved trace line could not be read (``line``)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class RunStateError(AgentnbError):
    """A run or stepper was used out of order (step after the end, run_sync in a loop)."""


class ApprovalError(AgentnbError):
    """An approval or denial was refused: no such waiting call, other arguments than the
    digest given, an expired request, or one decided already."""


class ModelError(AgentnbError):
    """The model did not produce a usable reply."""


class ModelCallFailed(ModelError):
    """The model raised an exception; the original exception is ``__cause__``."""


class ModelHTTPError(ModelError):
    """An HTTP model failed after its retries; ``status`` is None for connection errors."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: str = "",
        request_id: str | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.request_id = request_id
        self.attempts = attempts


class ModelResponseError(ModelError):
    """The model answered with something that is not a valid assistant message."""


class ModelStreamError(ModelResponseError):
    """A streamed reply broke off (no finish, no ``[DONE]``) or carried unreadable chunks."""


class CassetteMiss(ModelError):
    """A replayed request is not in the cassette; ``difference`` says how it differs."""

    def __init__(self, message: str, difference: str = "") -> None:
        super().__init__(message)
        self.difference = difference


class UnexpectedModelCall(ModelError):
    """A ScriptedModel was called more times than it has replies."""


class ScriptNotConsumed(AgentnbError, AssertionError):
    """ScriptedModel.assert_complete() found replies that were never requested."""
