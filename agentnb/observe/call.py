"""One proxied call: what was sent and received (never a header, never a key), and the event
that records a failed one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._secrets import Secrets
from ..events import Event, Origin
from ..models.base import ReplyAssembler
from .threading import Thread

__all__ = ["Call", "UpstreamFailed"]


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
class Call:
    """One proxied request: what was sent and received (never a header, never a key)."""

    session_id: str
    path: str
    body: dict[str, Any]
    stream: bool
    started: float
    status: int | None = None
    response: str = ""
    latency: float = 0.0
    first_chunk: float | None = None
    error: str | None = None
    #: The request's query parameters, credentials left out (``?api-key=`` never kept).
    query: list[tuple[str, str]] = field(default_factory=list)
    thread: Thread | None = field(default=None, repr=False)
    origin: Origin | None = field(default=None, repr=False)
    _assembler: ReplyAssembler | None = field(default=None, repr=False)
    _pending: bytes = field(default=b"", repr=False)
    _raw: list[bytes] = field(default_factory=list, repr=False)
    _chunks: int = field(default=0, repr=False)
    #: The request's credentials while it is in flight: masked in everything kept.
    _secrets: Secrets = field(default_factory=Secrets, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and self.status < 400
