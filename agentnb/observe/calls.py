"""One proxied model call: what was sent and received (never a header, never a key), and the
two events a proxied call adds to the runtime's: where it went, and how it failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import Event
from ..models import Secrets
from ..runtime import ExternalRun
from ..session import RunRecord

if TYPE_CHECKING:
    from .conversations import Conversation
    from .wire import Reply

__all__ = ["ProxiedCall", "UpstreamCalled", "UpstreamFailed"]


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class UpstreamCalled(Event):
    """call_model, proxied: the app's request went to the upstream (after ``RequestAssembled``).

    ``api`` is the wire format (``chat``, ``responses``, ``anthropic``), ``provider`` the
    GenAI conventions' provider name, ``server_address``/``server_port`` the upstream, and
    ``traceparent`` the W3C trace context the app sent (its span is the call's parent).
    """

    api: str
    provider: str
    server_address: str
    server_port: int
    stream: bool
    traceparent: str | None = None

    def summary(self) -> str:
        how = "streamed" if self.stream else "whole"
        return f"proxied {self.api} call to {self.server_address}:{self.server_port} ({how})"


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class UpstreamFailed(Event):
    """call_model, proxied: the upstream answered an error status, broke off, or timed out."""

    status: int | None
    error: str
    latency: float

    def summary(self) -> str:
        what = f"HTTP {self.status}" if self.status else "no answer"
        return f"upstream failed ({what}, {self.latency * 1000:.1f} ms): {self.error[:120]}"


@dataclass(eq=False)
class ProxiedCall:
    """One proxied request and its answer (``proxy.calls``), and the run it is in its session.

    ``body`` is the request as the app sent it (credentials masked), ``response`` the
    upstream's body as text (a stream's events as they passed), both what a cassette
    replays. While the call is in flight it holds its session (it is the session's
    ``active_run``: a view shows it running).
    """

    id: str
    session_id: str
    api: str
    path: str
    body: dict[str, Any]
    stream: bool
    started: float
    #: The request's query parameters, credentials left out (``?api-key=`` never kept).
    query: list[tuple[str, str]] = field(default_factory=list)
    status: int | None = None
    response: str = ""
    latency: float = 0.0
    first_chunk: float | None = None
    error: str | None = None
    model: str = ""
    #: The reply as read (None until it came, or when it could not be read).
    reply: Reply | None = field(default=None, repr=False)
    conversation: Conversation | None = field(default=None, repr=False)
    #: Its run's state (``ExternalRun``): its ids, events and record, made as every
    #: run's; ``record`` is its record in ``session.runs``.
    state: ExternalRun | None = field(default=None, repr=False)
    #: The estimated prompt tokens of its request (for usage the upstream does not send).
    estimate: int = field(default=0, repr=False)
    #: Responses API ``store``: False, and no later request may continue from its reply.
    store: bool = field(default=True, repr=False)
    #: The request's credentials while it is in flight: masked in everything kept.
    secrets: Secrets = field(default_factory=Secrets, repr=False)
    cancel_requested: bool = field(default=False, repr=False)

    @property
    def record(self) -> RunRecord | None:
        """Its run's record in the session (``session.runs``)."""
        return None if self.state is None else self.state.record

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and self.status < 400

    @property
    def done(self) -> bool:
        return self.status is not None or self.error is not None

    # -- what a session needs of the run holding it (session.lock.ActiveRun) ----------------
    @property
    def driving(self) -> bool:
        return not self.done

    @property
    def stage(self) -> str:
        return "call_model"

    @property
    def next_stage(self) -> str | None:
        return None

    def cancel(self) -> None:
        """Cut this call: the app gets the stream cut (or a 499) and the call is recorded as
        cancelled. (A view's Stop button reaches a proxied call this way.)"""
        self.cancel_requested = True
