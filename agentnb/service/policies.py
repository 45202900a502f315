"""The service's policies: a full queue, a busy session, a failed attempt.

- ``on_full``: ``"reject"`` raises :class:`~agentnb.service.QueueFull` at ``submit``;
  ``"wait"`` makes the submitter wait for room (backpressure, 002 §3.2).
- ``multitask`` (a message for a session that already has a task, LangGraph's "double
  texting"): ``"enqueue"`` runs it after the others, in order; ``"reject"`` refuses it
  (:class:`~agentnb.errors.SessionBusy`); ``"interrupt"`` cancels the running task (its open
  calls answered ``cancelled``) and runs this one next; ``"rollback"`` cancels it and removes
  its messages first.
- :class:`Retry`: which failures are retried (the model's or the transport's, never a tool's
  refusal, which the model already saw) and how long to wait between attempts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import (
    CassetteMiss,
    ConfigurationError,
    ModelError,
    ScriptNotConsumed,
    UnexpectedModelCall,
)

__all__ = ["MULTITASK", "ON_FULL", "Multitask", "OnFull", "Retry"]

OnFull = Literal["reject", "wait"]
Multitask = Literal["enqueue", "reject", "interrupt", "rollback"]
ON_FULL: tuple[OnFull, ...] = ("reject", "wait")
MULTITASK: tuple[Multitask, ...] = ("enqueue", "reject", "interrupt", "rollback")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigurationError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return str(value)


_BUGS = (TypeError, ValueError, AttributeError, KeyError, IndexError, NameError, AssertionError)


@dataclass(frozen=True, slots=True)
class Retry:
    """Bounded retries with exponential backoff: ``attempts`` in all (1 = never retry).

    The wait before attempt ``n + 1`` is ``backoff * factor ** (n - 1)`` seconds, at most
    ``max_backoff``.
    """

    attempts: int = 3
    backoff: float = 0.1
    factor: float = 2.0
    max_backoff: float = 5.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.backoff < 0 or self.factor < 1 or self.max_backoff < 0:
            raise ConfigurationError(
                f"Retry needs attempts >= 1, backoff >= 0, factor >= 1 and max_backoff >= 0; "
                f"got {self!r}"
            )

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return float(min(self.backoff * self.factor ** (attempt - 1), self.max_backoff))

    @staticmethod
    def retryable(error: BaseException | None) -> bool:
        """A model or transport failure (worth another attempt), not a programming error."""
        if error is None or isinstance(
            error, ScriptNotConsumed | UnexpectedModelCall | CassetteMiss
        ):
            return False
        if isinstance(error.__cause__, _BUGS):  # a model function's bug: another try won't help
            return False
        if isinstance(error, ModelError | TimeoutError | ConnectionError):
            return True
        return type(error).__module__.startswith(("httpx", "httpcore"))


NO_RETRY = Retry(attempts=1)
