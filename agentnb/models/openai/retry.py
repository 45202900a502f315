"""Retries for HTTP models: exponential backoff with jitter, ``Retry-After``, a bounded budget.

Built on tenacity (not a hand-written loop): :class:`RetryPolicy` holds the knobs and builds
a fresh ``AsyncRetrying`` per call. It retries on 408, 409, 429 and 5xx answers, timeouts
and connection errors; it waits what ``Retry-After`` (or ``retry-after-ms``) asks, else an
exponential delay with jitter; and it stops after ``attempts`` tries, or when the next wait
would go past ``budget`` seconds, or when the server asks to wait longer than
``max_retry_after``. Then a :class:`~agentnb.errors.ModelHTTPError` says what happened.
``sleep`` is injectable, so tests never wait for real.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)
from tenacity.stop import stop_base

from ..._secrets import Secrets
from ...errors import ModelHTTPError

__all__ = ["RetryPolicy", "StatusError", "call_with_retries", "redact"]

T = TypeVar("T")

#: Statuses worth another try: timeout, conflict, rate limit, server errors.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class StatusError(Exception):
    """An HTTP answer that is not 2xx (internal; becomes ModelHTTPError)."""

    def __init__(self, status: int, body: str, headers: httpx.Headers) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.request_id = headers.get("x-request-id") or headers.get("request-id")
        self.retry_after = retry_after_seconds(headers)


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Seconds a server asks to wait: ``retry-after-ms``, ``Retry-After`` seconds or date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, StatusError):
        return exc.status in RETRY_STATUSES
    return isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError)


class _stop_on_long_retry_after(stop_base):
    """Give up at once when the server asks for a wait longer than we are willing to give."""

    def __init__(self, limit: float) -> None:
        self.limit = limit

    def __call__(self, retry_state: RetryCallState) -> bool:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        after = exc.retry_after if isinstance(exc, StatusError) else None
        return after is not None and after > self.limit


class _stop_past_budget(stop_base):
    """Stop when the next wait would end past the budget (waits count even when faked)."""

    def __init__(self, budget: float) -> None:
        self.budget = budget

    def __call__(self, retry_state: RetryCallState) -> bool:
        spent = max(retry_state.seconds_since_start or 0.0, retry_state.idle_for)
        return spent + (retry_state.upcoming_sleep or 0.0) > self.budget


@dataclass(frozen=True)
class RetryPolicy:
    """How hard an HTTP model tries. ``RetryPolicy(attempts=1)`` never retries."""

    attempts: int = 4
    #: Total seconds (tries and waits) after which no new try starts.
    budget: float = 60.0
    initial: float = 0.5
    max_wait: float = 20.0
    jitter: float = 0.5
    #: A longer ``Retry-After`` than this is not waited for: the error is raised at once.
    max_retry_after: float = 60.0
    #: The sleep function (``asyncio.sleep`` when None); tests pass a recorder.
    sleep: Callable[[float], Awaitable[None]] | None = field(default=None, compare=False)

    def _wait(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        if isinstance(exc, StatusError) and exc.retry_after is not None:
            return exc.retry_after
        backoff = wait_exponential(multiplier=self.initial, max=self.max_wait) + wait_random(
            0, self.jitter
        )
        return float(backoff(retry_state))

    def retrying(self) -> AsyncRetrying:
        stop = (
            stop_after_attempt(max(1, self.attempts))
            | _stop_past_budget(self.budget)
            | _stop_on_long_retry_after(self.max_retry_after)
        )
        options: dict[str, object] = {}
        if self.sleep is not None:
            options["sleep"] = self.sleep
        return AsyncRetrying(
            stop=stop,
            wait=self._wait,
            retry=retry_if_exception(is_retryable),
            reraise=True,
            **options,  # type: ignore[arg-type]
        )


def redact(text: str, secret: Secrets | str | Iterable[str] | None) -> str:
    """``text`` with every form of ``secret`` (a :class:`Secrets`, or plain values) as ``***``."""
    if isinstance(secret, Secrets):
        return secret.mask(text)
    values = (secret,) if isinstance(secret, str) or secret is None else secret
    return Secrets(values).mask(text)


def trim(text: str, limit: int = 500) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def call_with_retries(
    policy: RetryPolicy,
    attempt: Callable[[], Awaitable[T]],
    *,
    what: str,
    secret: Secrets | str | Iterable[str] | None = None,
) -> T:
    """Run ``attempt`` under ``policy``; failures end as :class:`ModelHTTPError`.

    ``what`` names the call in messages (``"POST http://…/chat/completions"``).
    """
    tries = 0
    try:
        async for try_ in policy.retrying():
            with try_:
                tries = try_.retry_state.attempt_number
                return await attempt()
    except StatusError as exc:
        body = trim(redact(exc.body, secret))  # masked before cut: no half key
        hint = ""
        if exc.status in (401, 403):
            hint = " (check the API key and that it belongs to this endpoint)"
        elif exc.retry_after is not None and exc.retry_after > policy.max_retry_after:
            hint = f" (the server asked to wait {exc.retry_after:.0f} s, more than allowed)"
        rid = f"; request id {exc.request_id}" if exc.request_id else ""
        raise ModelHTTPError(
            f"{what} failed with HTTP {exc.status} after {_n(tries)}{hint}: {body or '(no body)'}"
            f"{rid}",
            status=exc.status,
            body=body,
            request_id=exc.request_id,
            attempts=tries,
        ) from None
    except httpx.TimeoutException as exc:
        raise ModelHTTPError(
            f"{what} timed out ({type(exc).__name__}) after {_n(tries)}",
            attempts=tries,
        ) from exc
    except httpx.TransportError as exc:
        detail = redact(str(exc) or type(exc).__name__, secret)
        raise ModelHTTPError(
            f"{what} could not complete after {_n(tries)}: {detail}", attempts=tries
        ) from exc
    raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover


def _n(tries: int) -> str:
    return f"{tries} attempt" + ("" if tries == 1 else "s")
