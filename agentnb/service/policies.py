"""The service's policies: a full queue, a busy session, a failed attempt.

- ``on_full``: ``"reject"`` raises :class:`~agentnb.service.QueueFull` at ``submit``;
  ``"wait"`` makes the submitter wait for room (backpressure, 002 §3.2).
- ``multitask`` (a message for a session that already has a task, LangGraph's "double
  texting"): ``"enqueue"`` runs it after the others, in order; ``"reject"`` refuses it
  (:class:`~agentnb.errors.SessionBusy`); ``"interrupt"`` cancels the running task (its open
  calls answered ``cancelled``) and runs this one next; ``"rollback"`` cancels it and removes
  its messages first.
- :class:`Retry`: which failures are retried (the model's or the transport's, never a tool's
  refusal, which the model already saw) and how long to wait between attempts (exponential,
  capped, jittered: tenacity's ``wait_exponential`` + ``wait_random``, computed here, so a
  task's first attempt costs nothing but its call; the HTTP models'
  :class:`~agentnb.models.RetryPolicy` drives tenacity itself).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from ..errors import (
    CassetteMiss,
    ConfigurationError,
    ModelError,
    ScriptNotConsumed,
    UnexpectedModelCall,
)

T = TypeVar("T")

__all__ = ["MULTITASK", "ON_FULL", "Multitask", "OnFull", "Retry", "attempts"]

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
    ``max_backoff``, plus up to ``jitter`` seconds at random.
    """

    attempts: int = 3
    backoff: float = 0.1
    factor: float = 2.0
    max_backoff: float = 5.0
    jitter: float = 0.0

    def __post_init__(self) -> None:
        if (
            not isinstance(self.attempts, int)
            or self.attempts < 1
            or self.backoff < 0
            or self.factor < 1
            or self.max_backoff < 0
            or self.jitter < 0
        ):
            raise ConfigurationError(
                f"Retry needs attempts >= 1, backoff >= 0, factor >= 1, max_backoff >= 0 and "
                f"jitter >= 0; got {self!r}"
            )

    def wait(self, failed: int) -> float:
        """Seconds to wait after attempt ``failed`` (1, 2, ...) before the next one."""
        try:
            seconds = self.backoff * self.factor ** (failed - 1)
        except OverflowError:
            seconds = self.max_backoff
        seconds = max(0.0, min(seconds, self.max_backoff))
        return seconds + random.uniform(0, self.jitter) if self.jitter else seconds

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


async def attempts(
    policy: Retry,
    attempt: Callable[[int], Awaitable[T | None]],
    *,
    retry_on: Callable[[T], bool],
    sleep: Callable[[float], Awaitable[None]] | None = None,
    give_up: Callable[[], bool] = lambda: False,
    first: T | None = None,
) -> T | None:
    """Run ``attempt(n)`` (n = 1, 2, ...) under ``policy`` while ``retry_on(result)``,
    waiting ``policy.wait(n)`` with ``sleep`` (a durable sleep on DBOS) between them; the
    last result, or None when ``give_up()`` held first (an attempt returns None to stop
    there too). ``give_up()`` is asked before each wait and after it. An exception of an
    attempt is a fault of the service itself, not an attempt to retry: it propagates.
    ``first``: the result of attempt 1, made already (the retries follow it)."""
    result: T | None = first
    for n in range(1 if first is None else 2, policy.attempts + 1):
        if give_up():
            break
        if n > 1:
            await (sleep or asyncio.sleep)(policy.wait(n - 1))
            if give_up():
                break
        result = await attempt(n)
        if result is None or not retry_on(result):
            break
    return result


NO_RETRY = Retry(attempts=1)
