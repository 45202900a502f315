"""Faults a travel tool can be made to show, for lessons on failure handling (000 §5.2), and
hints it can add to its results, for the lesson on runs that do not converge (000 §5.1)."""

from __future__ import annotations

import asyncio
from datetime import date as Date
from typing import Any, Literal

from ..tools.tool import ToolError
from .dates import resolve_date

__all__ = ["FAULTS", "HINT", "Fault", "FaultInjection", "UpstreamError"]

#: What ``TravelTools(hints=True)`` adds to each search result (000 §5.1, the third fix).
HINT = "结果已完整：若用户预算允许，可直接推荐本列表第一个；无需重复查询。"

Fault = Literal["timeout", "upstream_error", "rate_limit", "empty", "noisy"]
#: The faults a tool can be made to show: what each one teaches is in the README. ``noisy`` is
#: no failure: a good result that also carries an irrelevant error text (002 §2.1).
FAULTS: tuple[str, ...] = ("timeout", "upstream_error", "rate_limit", "empty", "noisy")
#: What ``noisy`` adds to a good result: an error that does not concern it.
NOISE = {"warnings": ["error: the price cache refreshed late; these results are current"]}


class UpstreamError(RuntimeError):
    """What an injected ``upstream_error`` raises: the runtime reports it to the model."""


class FaultInjection:
    """Per-tool faults: ``inject(tool, fault)``, ``clear()``; tools call ``await _fault(name)``."""

    faults: dict[str, str]
    fault_days: dict[str, str]  # tool -> the one ISO day its fault applies to
    timeout: float
    today: Date
    hints: bool

    def inject(self, tool: str, fault: str | None, *, date: str | None = None) -> None:
        """Make ``tool`` fail with ``fault`` on every call (``None`` to heal it), or only on
        calls for ``date`` (any form the tools read: "周五", "2025-01-10"), so the next day
        still works: "周五航班暂时不可用，周六有航班" (000 §5.2)."""
        names = ("search_flights", "search_weather", "search_hotels", "calculate_cost")
        if tool not in names:
            raise ValueError(f"unknown travel tool {tool!r}; choose one of {', '.join(names)}")
        if fault is None:
            self.faults.pop(tool, None)
        elif fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
        else:
            self.faults[tool] = fault
        self.fault_days.pop(tool, None)
        if fault is not None and date is not None:
            self.fault_days[tool] = resolve_date(date, self.today).isoformat()

    def clear(self) -> None:
        """Heal every tool."""
        self.faults.clear()
        self.fault_days.clear()

    def _hinted(self, result: dict[str, Any], tool: str = "") -> dict[str, Any]:
        """The result with the hint (``hints=True``) and the noise (fault ``noisy``)."""
        if self.faults.get(tool) == "noisy" and self.fault_days.get(tool) in (None, result.get(
                "date", result.get("check_in"))):  # fmt: skip
            result = {**result, **NOISE}
        return {**result, "hint": HINT} if self.hints else result

    async def _fault(self, tool: str, day: Date | None = None) -> bool:
        """Apply an injected fault; True means "return an empty result"."""
        only = self.fault_days.get(tool)
        if only is not None and (day is None or day.isoformat() != only):
            return False
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
