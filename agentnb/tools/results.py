"""Tool results: what the model reads back - serialised values and structured failures.

A tool's return value becomes the ``content`` of a tool message (:func:`to_content`); a failure
becomes ``{"ok": false, "kind": ..., "error": ..., "hint": ...}`` (:func:`error_content`),
where ``kind`` is one of :data:`ERROR_KINDS` for code to read, and the words are for the model.
A value JSON cannot hold is sent as its ``str()``, never reported as a failure: the call ran.

A result the model reads is bounded: at most :data:`MAX_RESULT_CHARS` characters by default
(``Tool(max_result_chars=...)`` per tool, ``None`` for no bound), the rest cut off with a line
that says so to the model, and a note on the call's ``ToolFinished`` event for the developer.
A 60 MB page would otherwise go into the transcript, every later request and every save.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ValidationError

from .._fast import dumps_with

__all__ = [
    "ERROR_KINDS",
    "MAX_RESULT_CHARS",
    "UNCERTAIN",
    "UNCERTAIN_HINT",
    "ToolError",
    "describe_validation_error",
    "error_content",
    "error_kind",
    "read_error",
    "serialise",
    "to_content",
]


class ToolError(Exception):
    """Raise inside a tool to send the model a clear, structured failure.

    The model receives ``{"ok": false, "error": message, "hint": hint, ...}`` and the run
    goes on. Use it for expected failures: unknown city, no seats, upstream timeout.
    ``kind`` (one of :data:`ERROR_KINDS`, ``tool_error`` by default) is what code reads.
    """

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        retryable: bool | None = None,
        data: dict[str, Any] | None = None,
        kind: str = "tool_error",
    ) -> None:
        super().__init__(message)
        if kind not in ERROR_KINDS:
            raise ValueError(f"kind must be one of {', '.join(ERROR_KINDS)}, not {kind!r}")
        self.kind = kind
        self.message = message
        self.hint = hint
        self.retryable = retryable
        self.data = data or {}


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, _dt.date | _dt.datetime | _dt.time):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, Decimal):
        return float(value)
    kind = type(value).__name__
    if kind == "DataFrame":
        return json.loads(value.to_json(orient="records", force_ascii=False, date_format="iso"))
    if kind == "Series":
        return json.loads(value.to_json(force_ascii=False, date_format="iso"))
    if callable(getattr(value, "tolist", None)):  # numpy arrays and scalars
        return value.tolist()
    raise TypeError(f"{kind} is not JSON serialisable")


# One encoder, built once: json.dumps(..., default=...) would build a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_jsonable, allow_nan=False)
#: The common case (plain JSON), as fast as json allows (see agentnb._fast).
_dumps = dumps_with(_jsonable)


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _encode(value: Any) -> str:
    try:
        return _ENCODER.encode(value)
    except ValueError:  # NaN or infinity somewhere: standard JSON says null
        return _ENCODER.encode(_finite(json.loads(json.dumps(value, default=_jsonable))))


#: At most this many characters of a tool's result reach the model (per tool:
#: ``Tool(max_result_chars=...)``); about 25,000 tokens, a fifth of a 128k context.
MAX_RESULT_CHARS = 100_000


def _cut(content: str, note: str | None, limit: int) -> tuple[str, str | None]:
    """``content`` cut to ``limit`` characters, with a line saying so, and the note."""
    shown = (
        f"{content[:limit]}\n[truncated by agentnb: the result had {len(content):,} "
        f"characters; the first {limit:,} are shown]"
    )
    why = f"the result was cut from {len(content):,} to {limit:,} characters (max_result_chars)"
    return shown, why if note is None else f"{note}; {why}"


def to_content(value: Any) -> str:
    """Serialise a tool's return value into the ``content`` of a tool message.

    Strings pass through; everything else becomes standard JSON (pydantic models,
    dataclasses, DataFrames as records, dates as ISO strings; NaN and infinities as null).
    Chinese stays readable (no ``\\u`` escapes). What JSON cannot hold is sent as its ``str()``
    (see :func:`serialise`, which also says so).
    """
    return serialise(value)[0]


def serialise(value: Any, limit: int | None = MAX_RESULT_CHARS) -> tuple[str, str | None]:
    """The content of a tool message for ``value``, and a note when part of it is not JSON
    or when it was cut to ``limit`` characters (see the module docstring).

    A value JSON cannot hold (a ``Fraction``, an ``mpmath.mpf``, ``Ellipsis``) is sent as its
    ``str()``, alone (``Fraction(1, 3)`` -> ``1/3``) or inside the JSON around it; the note
    names its type, for the developer. The result is still the tool's: the call ran.
    """
    if isinstance(value, str):
        content, note = value, None
    else:
        try:
            content, note = _dumps(value), None  # the common case: plain JSON
        except (TypeError, ValueError, RecursionError):
            content, note = _careful(value)
    if limit is not None and len(content) > limit:
        return _cut(content, note, limit)
    return content, note


def _careful(value: Any) -> tuple[str, str | None]:
    as_text: list[str] = []

    def default(part: Any) -> Any:
        try:
            return _jsonable(part)
        except Exception:  # not JSON: its text, and a note
            as_text.append(type(part).__name__)
            return _text(part)

    if not isinstance(value, dict | list | tuple | int | float | bool | type(None)):
        value = default(value)
        if as_text:
            return value, _note(as_text)
    try:  # NaN and infinities pass through the first pass, and become null in the second
        plain = json.loads(json.dumps(value, ensure_ascii=False, default=default))
        return _ENCODER.encode(_finite(plain)), _note(as_text) if as_text else None
    except (TypeError, ValueError, RecursionError) as exc:  # keys not text, a cycle, too deep
        name = type(value).__name__
        return _text(value), f"{name} could not be sent as JSON ({exc}); the model got its str()"


def _text(value: Any) -> str:
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__} whose text cannot be shown>"


def _note(names: list[str]) -> str:
    kinds = ", ".join(dict.fromkeys(names))  # in order, once each
    return f"not JSON, sent as str(): {kinds}"


#: Machine-readable kinds of failed tool results (``ToolMessage.kind``, ``ToolFinished.kind``).
ERROR_KINDS = (
    "invalid_json",
    "unknown_tool",
    "invalid_arguments",
    "tool_error",
    "timeout",
    "cancelled",
    "not_executed",
    "uncertain",
    # a person said no to the call (an approval denied, or expired): it did not run
    "denied",
    # replaying tools (never executed): a run the recording does not hold, a call other than
    # the one recorded at this position of the run, a call past the end of the recorded turn
    "not_recorded",
    "mismatch",
    "exhausted",
)

#: What the model reads for a side-effecting call that was in flight when its worker died.
UNCERTAIN = (
    "this call may or may not have happened (its worker stopped while it ran); "
    "check before repeating"
)
UNCERTAIN_HINT = (
    "do not call it again blindly: look the effect up (a booking, a payment) or ask the user"
)


def error_content(
    error: str, hint: str | None = None, *, kind: str = "tool_error", **extra: Any
) -> str:
    """The structured failure the model sees: ``{"ok": false, "kind", "error", "hint"}``
    (the error and the hint each bounded by :data:`MAX_RESULT_CHARS`)."""
    if len(error) > MAX_RESULT_CHARS:
        error = _cut(error, None, MAX_RESULT_CHARS)[0]
    body: dict[str, Any] = {"ok": False, "kind": kind, "error": error}
    if hint:
        body["hint"] = (
            hint if len(hint) <= MAX_RESULT_CHARS else _cut(hint, None, MAX_RESULT_CHARS)[0]
        )
    body.update({k: v for k, v in extra.items() if v is not None})
    try:
        return _encode(body)
    except TypeError:  # a hint or data value JSON cannot hold: the model gets its repr
        return _encode(json.loads(json.dumps(body, ensure_ascii=False, default=repr)))


def read_error(content: str) -> dict[str, Any] | None:
    """The structured failure a tool message's ``content`` carries (what :func:`error_content`
    wrote: a JSON object with ``"ok": false``), or None for a result. The one reader of that
    shape: ``ToolMessage.error``, checks and recordings all ask it."""
    if not content.startswith("{"):
        return None
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply: not ours
        return None
    return value if isinstance(value, dict) and value.get("ok") is False else None


def error_kind(content: str) -> str | None:
    """The machine-readable ``kind`` of a failed result's ``content`` (``tool_error`` when it
    names none), or None for a result."""
    error = read_error(content)
    return None if error is None else str(error.get("kind") or "tool_error")


def describe_validation_error(exc: ValidationError) -> list[dict[str, str]]:
    """Turn a pydantic error into [{"field": ..., "problem": ...}] a model can act on."""
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        kind = err["type"]
        if kind == "missing":
            problem = "required argument is missing"
        elif kind == "extra_forbidden":
            problem = "unexpected argument (not in the schema)"
        else:
            problem = err["msg"]
            if "input" in err and kind not in ("model_type", "dict_type"):
                problem += f" (got {json.dumps(err['input'], ensure_ascii=False, default=str)})"
        problems.append({"field": field, "problem": problem})
    return problems
