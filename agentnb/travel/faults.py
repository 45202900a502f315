"""Faults a travel tool can be made to show, for lessons on failure handling (000 §5.2)."""

from __future__ import annotations

import asyncio
from typing import Literal

from ..tools import ToolError

__all__ = ["FAULTS", "Fault", "FaultInjection", "UpstreamError"]

Fault = Literal["timeout", "upstream_error", "rate_limit", "empty"]
#: The faults a tool can be made to show: what each one teaches is in the README.
FAULTS: tuple[str, ...] = ("timeout", "upstream_error", "rate_limit", "empty")


class UpstreamError(RuntimeError):
    """What an injected ``upstream_error`` raises: the runtime reports it to the model."""


class FaultInjection:
    """Per-tool faults: ``inject(tool, fault)``, ``clear()``; tools call ``await _fault(name)``."""

    faults: dict[str, str]
    timeout: float

    def inject(self, tool: str, fault: str | None) -> None:
        """Make ``tool`` fail with ``fault`` on every call (``None`` to heal it)."""
        names = ("search_flights", "search_weather", "search_hotels", "calculate_cost")
        if tool not in names:
            raise ValueError(f"unknown travel tool {tool!r}; choose one of {', '.join(names)}")
        if fault is None:
            self.faults.pop(tool, None)
        elif fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
        else:
            self.faults[tool] = fault

    def clear(self) -> None:
        """Heal every tool."""
        self.faults.clear()

    async def _fault(self, tool: str) -> bool:
        """Apply an injected fault; True means "return an empty result"."""
        fault = self.faults.get(tool)
        if fault == "timeout":
            await asyncio.sleep(self.timeout + 1)
        elif fault == "upstream_error":
            raise UpstreamError(f"{tool}: upstream service returned HTTP 502 Bad Gateway")
        elif fault == "rate_limit":
            raise ToolError(
                "rate limited by the upstream service (HTTP 429 Too Many Requests)",
                hint="wait before retrying; tell the user this information is temporarily "
                "unavailable if it persists",
                retryable=True,
                data={"code": "rate_limited"},
            )
        return fault == "empty"
