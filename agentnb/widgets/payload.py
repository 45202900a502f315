"""What the browser receives: small JSON payloads built from messages, events and requests.

The front end never gets Python objects, only these dicts. Every string in them is data: the
ES module puts text into the page with ``textContent``, never as markup.

- :func:`message` - one message: its wire dict, estimated tokens, iteration, and
  :func:`edit_mark`, what a hand edit changed.
- :func:`event_row` - one event as a timeline row (no request or message bodies).
- :func:`context` - the request context: instructions and each tool schema, with tokens.
- :func:`pack` / the snapshot - the whole state, zlib-compressed, for late or reloaded views.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from .. import _json
from ..events import describe_edit
from ..messages import SystemMessage

try:  # the runtime's heuristic; a local copy keeps the view working if it moves
    from ..tokens import estimate_json_tokens
except ImportError:  # pragma: no cover

    def estimate_json_tokens(value: Any) -> int:
        return max(1, len(json.dumps(value, ensure_ascii=False)) // 3)


__all__ = [
    "context",
    "edit_mark",
    "error_kind",
    "estimate_json_tokens",
    "event_row",
    "iterations",
    "message",
    "new_since",
    "pack",
    "size",
    "system_of",
]

#: Event fields a timeline row keeps (scalars only; bodies are fetched on demand).
_ROW_FIELDS = (
    "latency", "ok", "name", "call_id", "reason", "decision", "finish_reason", "traceback",
    "detail", "note", "subsession_id", "idempotency_key",
)  # fmt: skip


def size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (how the comm measures what it sends)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def edit_mark(record: Any, *, before: bool = True) -> dict[str, Any]:
    """An :class:`~agentnb.session.edits.EditRecord` (or the ``SessionEdited`` event that
    announces it) for the browser: small, JSON only."""
    how = record.how or getattr(record, "action", "edit")
    mark: dict[str, Any] = {
        "seq": record.seq,
        "how": how,
        "changed": list(record.changed[:50]),
        "text": describe_edit(how, record.index, record.call_id, tuple(record.changed)),
    }
    if record.call_id:
        mark["call"] = record.call_id
    if before and record.before is not None:
        mark["before"] = record.before
    return mark


def message(m: Any, iteration: int | None, edit: Any = None, said: Any = None) -> dict[str, Any]:
    """One message for the browser: ``w`` wire dict, ``tok`` estimated tokens, ``it``, and
    ``ed`` (what a hand edit changed) when an :class:`~agentnb.session.edits.EditRecord`
    put it there; ``su``: a conversation's user turn (who played it, the rule, why)."""
    out = {"w": m.wire(), "tok": m.tokens, "it": iteration}
    if edit is not None:
        out["ed"] = edit_mark(edit)
    if said is not None:
        out["su"] = said
    return out


def tool_stat(event: Any, session: Any = None) -> dict[str, Any]:
    """A ``ToolFinished`` for the result card: ok, kind, ms; the traceback of a tool that
    raised (``tb``, shown collapsed), the developer's ``note`` on an ok result, and the
    sub-session an agent run as a tool worked in (``sub``, from ``session.subsessions``)."""
    stat: dict[str, Any] = {
        "ok": event.ok,
        "kind": error_kind(event),
        "ms": round(event.latency * 1000, 1),
    }
    for key, field in (("tb", "traceback"), ("note", "note")):
        value = getattr(event, field, None)
        if value:
            stat[key] = str(value)
    sub_id = getattr(event, "subsession_id", None)
    sub = getattr(session, "subsessions", {}).get(sub_id) if sub_id else None
    if sub_id:
        stat["sub"] = subsession(sub, sub_id)
    return stat


def subsession(sub: Any, sub_id: str) -> dict[str, Any]:
    """A sub-agent's session, nested in the parent's view: its messages and how it ended."""
    if sub is None:
        return {"id": sub_id, "messages": [], "missing": True}
    runs = getattr(sub, "runs", ())
    last = runs[-1] if runs else None
    return {
        "id": sub.id,
        "messages": [message(m, None) for m in sub.messages],
        "stop_reason": getattr(last, "stop_reason", None),
    }


def error_kind(event: Any) -> str | None:
    """``ToolFinished.kind`` (``error_kind`` before the runtime renamed it)."""
    return getattr(event, "kind", None) or getattr(event, "error_kind", None)


def event_row(event: Any) -> dict[str, Any]:
    """A timeline row: type, stage, iteration, time, summary, latency and tokens."""
    row: dict[str, Any] = {
        "seq": event.seq,
        "type": event.type,
        "stage": event.stage,
        "it": event.iteration,
        "t": event.time,
        "run": event.run_id,
        "summary": event.summary(),
    }
    for name in _ROW_FIELDS:
        value = getattr(event, name, None)
        if isinstance(value, str | int | float | bool):
            row[name] = value
    kind = error_kind(event)
    if kind:
        row["kind"] = kind
    usage = getattr(event, "usage", None)
    if usage is not None:
        row["tokens"] = usage.total_tokens
    budget = getattr(event, "budget", None)
    if isinstance(budget, Mapping):
        row["tokens"] = budget.get("total", 0)
        row["budget"] = dict(budget)
    if event.type == "ModelDelta":
        row.update(kind=event.kind, delta=event.delta, index=event.index)
    return row


def output_format(spec: Any) -> dict[str, Any] | None:
    """The answer format a request asks for (``request.output``): the schema as sent, whether
    strict, and what the strict rewrite changed or why it was not sent strict."""
    if spec is None:
        return None
    return {
        "name": spec.name,
        "strict": spec.strict,
        "schema": spec.schema,
        "notes": list(spec.notes),
        "tok": estimate_json_tokens(spec.schema),
    }


def context(
    system: Mapping[str, Any] | None, tools: Sequence[Mapping[str, Any]], output: Any = None
) -> dict[str, Any]:
    """The request context shown first: instructions, each tool's schema and the answer
    format (``Agent(output_type=...)``), with tokens."""
    text = ""
    tokens = 0
    if system is not None:
        content = system.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        tokens = SystemMessage(content=text).tokens if text else 0
    rows = []
    for schema in tools:
        fn = schema.get("function", schema)
        rows.append(
            {
                "name": str(fn.get("name", "?")),
                "description": str(fn.get("description", "")),
                "schema": schema,
                "tok": estimate_json_tokens(schema),
            }
        )
    shown: dict[str, Any] = {"instructions": text, "tok": tokens, "tools": rows}
    fmt = output_format(output)
    if fmt is not None:
        shown["output"] = fmt
    return shown


def iterations(length: int, wires: Sequence[Mapping[str, Any]], runs: Sequence[Any]) -> list[Any]:
    """The iteration that produced each message, from the runs' boundaries.

    Inside a run the user input is iteration 0; the reply to model call k and the tool
    results answering it are iteration k. A run that starts with tool results continues the
    loop of the run before it (a proxied app's call: one run per model call), so its count
    goes on from there. Messages added outside runs have none.
    """
    out: list[int | None] = [None] * length
    k = 0
    for record in runs:
        start = max(0, int(getattr(record, "start", 0) or 0))
        end = int(getattr(record, "end", -1))
        end = length if end < 0 or end > length else end
        if start >= length or wires[start].get("role") != "tool":
            k = 0
        for i in range(start, end):
            if wires[i].get("role") == "assistant":
                k += 1
            out[i] = k
    return out


def new_since(wires: Sequence[Mapping[str, Any]], requests: Sequence[Any]) -> int:
    """Index of the first message the latest model call (of ``session.requests``) did not see
    (len when none)."""
    if not requests:
        return 0
    sent = requests[-1].request.messages
    for j in range(len(sent) - 1, -1, -1):
        last = sent[j]
        if last.get("role") == "system" and j == 0:
            return 0
        for i in range(len(wires) - 1, -1, -1):
            if wires[i] is last:
                return i + 1
        break
    # Not shared by reference: count the history messages the request carried.
    history = len(sent) - (1 if sent and sent[0].get("role") == "system" else 0)
    return min(history, len(wires))


def pack(state: Mapping[str, Any]) -> bytes:
    """The snapshot as zlib-compressed JSON (the browser inflates it with DecompressionStream)."""
    text = _json.dumps(state, separators=(",", ":"))  # lone surrogates escaped: the one rule
    return zlib.compress(text.encode(), 1)  # level 1: 5x faster than 6 for 20% more bytes


def sendable(msg: Any) -> tuple[Any, int]:
    """``msg`` ready for the comm, and its size in bytes (lone surrogates shown as U+FFFD)."""
    try:
        return msg, size(msg)
    except UnicodeEncodeError:
        msg = displayable(msg)
        return msg, size(msg)


def displayable(msg: Any) -> Any:
    """``msg`` with lone surrogates (not Unicode, not sendable as UTF-8) shown as U+FFFD."""
    return _json.shown(msg)


def unpack(blob: bytes) -> Any:
    """The inverse of :func:`pack` (tests and late Python-side readers)."""
    return json.loads(zlib.decompress(blob))


def system_of(messages: Any) -> Any:
    """The system message a request starts with, or None."""
    first = messages[0] if messages else None
    return first if first is not None and first.get("role") in ("system", "developer") else None
