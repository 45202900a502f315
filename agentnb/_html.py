"""Static HTML for ``_repr_mimebundle_``: escaped cards that render without a kernel.

Every string from a model, a tool or a user passes through :func:`escape`: it is data,
never markup, and valid UTF-8 (lone surrogates as U+FFFD: :mod:`agentnb._json`'s rule).
The live, interactive view lives in :mod:`agentnb.widgets`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import _json


def escape(text: str) -> str:
    """``text`` as HTML text: escaped, lone surrogates shown as U+FFFD."""
    return html.escape(_json.shown(text))


_ROLE_COLOURS = {
    "system": "#6b7280",
    "developer": "#6b7280",
    "user": "#2563eb",
    "assistant": "#7c3aed",
    "tool": "#059669",
}
#: Contents longer than this fold into a <details> element showing the first PREVIEW chars.
FOLD_AT = 300
PREVIEW = 120
_CARD = (
    "border-left:4px solid {colour};padding:4px 8px;margin:4px 0;"
    "font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap;"
    "background:{bg}"
)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def _final(wires: list[Mapping[str, Any]]) -> int:
    """Index of the final answer: a last assistant message with text and no tool calls."""
    if wires:
        last = wires[-1]
        if last.get("role") == "assistant" and not last.get("tool_calls") and last.get("content"):
            return len(wires) - 1
    return -1


def message_card(
    wire: Mapping[str, Any],
    *,
    index: int | None = None,
    note: str | Sequence[str] = "",
    final: bool = False,
) -> str:
    """One message as a coloured card; tool calls listed with their ids.

    ``note`` is a warning or a list of warnings: each one is shown. Long contents fold into
    a ``<details>`` showing their size, except the final answer, which is always open.
    """
    role = str(wire.get("role", "?"))
    colour = _ROLE_COLOURS.get(role, "#374151")
    notes = [note] if isinstance(note, str) else list(note)
    notes = [n for n in notes if n]
    head = f"#{index} " if index is not None else ""
    head += role
    if role == "tool":
        head += f" ← {wire.get('name') or ''} #{wire.get('tool_call_id', '')}"
    parts = [f"<b>{escape(head)}</b>"]
    if final:
        parts.append(" <span style='color:#5b21b6'>final answer</span>")
    parts.extend(f"<div style='color:#b91c1c'>⚠ {escape(n)}</div>" for n in notes)
    text = _text(wire.get("content"))
    if not final and len(text) > FOLD_AT:  # <details> needs no JavaScript
        preview = escape(text[:PREVIEW].replace("\n", " ")) + "…"
        parts.append(
            f"<details><summary>{preview} <i>({len(text)} chars)</i></summary>"
            f"<div>{escape(text)}</div></details>"
        )
    elif text:
        parts.append("<div>" + escape(text) + "</div>")
    for call in wire.get("tool_calls") or ():
        fn = call.get("function", {})
        parts.append(
            "<div>→ <b>"
            + escape(str(fn.get("name", "")))
            + "</b>("
            + escape(str(fn.get("arguments", "")))
            + ") <span style='color:#6b7280'>#"
            + escape(str(call.get("id", "")))
            + "</span></div>"
        )
    bg = "#fef2f2" if notes else "#f5f3ff" if final else "transparent"
    style = _CARD.format(colour=colour, bg=bg)
    return f"<div style='{style}'>{''.join(parts)}</div>"


def transcript(
    wires: Iterable[Mapping[str, Any]],
    *,
    title: str = "",
    notes: Mapping[int, Sequence[str]] | None = None,
    start: int = 0,
) -> str:
    """A list of messages as cards, with an optional escaped title line.

    ``notes`` maps a message index to its warnings (``list[str]``; one string is accepted
    too): every warning is shown on its card. ``start`` is the index of the first message
    (when only the end of a long session is shown).
    """
    notes = notes or {}
    wires = list(wires)
    final = _final(wires)
    cards = [
        message_card(w, index=start + i, note=notes.get(start + i, ()), final=i == final)
        for i, w in enumerate(wires)
    ]
    head = f"<div style='font-weight:bold;margin:4px 0'>{escape(title)}</div>" if title else ""
    return "<div class='agentnb-transcript'>" + head + "".join(cards) + "</div>"


def table(rows: Iterable[Mapping[str, Any]], *, title: str = "") -> str:
    """A small key/value table (run summaries, event lists)."""
    rows = list(rows)
    if not rows:
        return f"<div>{escape(title)} (empty)</div>"
    cols = list(rows[0])
    head = "".join(f"<th style='text-align:left'>{escape(str(c))}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(r.get(c, '')))}</td>" for c in cols) + "</tr>"
        for r in rows
    )
    caption = f"<caption style='text-align:left'>{escape(title)}</caption>" if title else ""
    return f"<table style='font-size:12px'>{caption}<tr>{head}</tr>{body}</table>"
