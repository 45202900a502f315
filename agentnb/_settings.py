"""Checks for the settings of an Agent: each names the field and what it accepts."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from .errors import ConfigurationError

__all__ = ["CHECKS", "seconds", "text_setting"]


def _whole(low: int, *, optional: bool = False) -> Callable[[str, Any], Any]:
    def check(field: str, value: Any) -> Any:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigurationError(
                f"{field} must be a whole number >= {low}{' or None' if optional else ''}, "
                f"got {value!r}"
            )
        return value

    return check


def seconds(field: str, value: Any) -> Any:
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise ConfigurationError(
            f"{field} must be a positive number of seconds or None (no limit), got {value!r}"
        )
    return float(value)


def _flag(*, optional: bool = False) -> Callable[[str, Any], Any]:
    def check(field: str, value: Any) -> Any:
        if not isinstance(value, bool) and not (optional and value is None):
            raise ConfigurationError(
                f"{field} must be True or False{' or None' if optional else ''}, got {value!r}"
            )
        return value

    return check


def text_setting(field: str, value: Any) -> Any:
    if not isinstance(value, str):
        raise ConfigurationError(f"{field} must be a string, not {type(value).__name__}")
    return value


def _predicates(field: str, value: Any) -> Any:
    items = list(value) if isinstance(value, Iterable) else [value]
    bad = [p for p in items if not callable(p)]
    if bad:
        raise ConfigurationError(f"{field} takes functions fn(run) -> bool | str, got {bad[0]!r}")
    return items


def _params(field: str, value: Any) -> Any:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigurationError(f"{field} must be a dict of request fields, got {value!r}")
    reserved = {"messages", "tools", "model", "stream"} & set(value)
    if reserved:
        raise ConfigurationError(f"{field} cannot set {sorted(reserved)}: the runtime sets those")
    return dict(value)


def _frame(field: str, value: Any) -> Any:
    if value is None or value == "delimit":  # agentnb.context.framing.FRAMES
        return value
    raise ConfigurationError(f"{field} must be None or 'delimit' (spotlighting), got {value!r}")


CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "name": text_setting,
    "instructions": text_setting,
    "max_iterations": _whole(1),
    "repeat_limit": _whole(0),
    "token_budget": _whole(1, optional=True),
    "stop_when": _predicates,
    "final_answer_on_stop": _flag(),
    "parallel_tool_calls": _flag(optional=True),
    "tool_timeout": seconds,
    "model_params": _params,
    "context_window": _whole(1, optional=True),
    "reply_reserve": _whole(0),
    "frame_results": _frame,
}
