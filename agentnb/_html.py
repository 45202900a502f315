"""Static HTML for ``_repr_mimebundle_``: escaped cards that render without a kernel.

Every string from a model, a tool or a user passes through :func:`escape`: it is data,
never markup, and valid UTF-8 (lone surrogates as U+FFFD: :mod:`agentnb._json`'s rule).
The live, interactive view lives in :mod:`agentnb.widgets`.
"""

from __future__ import annotations

import hashlib
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
    mark: Mapping[str, Any] | None = None,
    anchor: str = "",
) -> str:
    """One message as a coloured card; tool calls listed with their ids.

    ``note`` is a warning or a list of warnings: each one is shown. Long contents fold into
    a ``<details>`` showing their size, except the final answer, which is always open.
    ``mark``: what provenance marks on it (:meth:`agentnb.provenance.Provenance.marks`): a
    result's flagged spans highlighted with why, the calls it steered, a steered call's link
    to the result it came from (``#{anchor}-{index}``: the card's id), and under each call
    where each argument came from (the live view's chips: ``invented`` when found nowhere).
    """
    mark = mark or {}
    flags = list(mark.get("flags") or ())
    role = str(wire.get("role", "?"))
    colour = "#dc2626" if flags else _ROLE_COLOURS.get(role, "#374151")
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
    parts.extend(
        f"<div class='anb-injection-note' style='color:#b91c1c' title='rules: "
        f"{escape(', '.join(f.get('rules') or ()))}'>⚑ instruction found in data"
        f"{escape(' at ' + f['path'] if f.get('path') else '')}: {escape(str(f['why']))}</div>"
        for f in flags
    )
    if mark.get("steers"):
        links = ", ".join(
            _link(anchor, s["at"], f"{s.get('tool') or '?'}({s['arg']}) #{s['call']}")
            for s in mark["steers"]
        )
        parts.append(
            f"<div class='anb-steers' style='color:#b91c1c'>⚑ this result steered: {links}</div>"
        )
    text = _text(wire.get("content"))
    shown = _marked(str(mark.get("text", "")), mark.get("value"), flags) if flags else ""
    if flags and len(text) > FOLD_AT:  # open: the highlight shows without a click
        parts.append(
            f"<details open><summary><i>({len(text)} chars)</i></summary>"
            f"<div>{shown}</div></details>"
        )
    elif flags:
        parts.append(f"<div>{shown}</div>")
    elif not final and len(text) > FOLD_AT:  # <details> needs no JavaScript
        preview = escape(text[:PREVIEW].replace("\n", " ")) + "…"
        parts.append(
            f"<details><summary>{preview} <i>({len(text)} chars)</i></summary>"
            f"<div>{escape(text)}</div></details>"
        )
    elif text:
        parts.append("<div>" + escape(text) + "</div>")
    steered = mark.get("steered") or {}
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
        if by := steered.get(str(call.get("id"))):
            links = ", ".join(
                _link(anchor, b["i"], f"{b['arg']} ← {b['from']}"
                      + (f" {b['path']}" if b.get("path") else "")
                      + (f" (#{b['i']})" if b["i"] is not None else ""), title=b.get("why"))
                for b in by
            )  # fmt: skip
            parts.append(
                "<div class='anb-steered-note' style='color:#b91c1c;padding-left:1em'>"
                f"⚑ steered by an instruction found in data: {links}</div>"
            )
        if args := (mark.get("args") or {}).get(str(call.get("id"))):
            parts.append(_chips(args))
    bg = "#fef2f2" if notes or flags or steered else "#f5f3ff" if final else "transparent"
    style = _CARD.format(colour=colour, bg=bg)
    at = f" id='{escape(anchor)}-{index}'" if anchor and index is not None and mark else ""
    return f"<div{at} style='{style}'>{''.join(parts)}</div>"


#: A source's kind as the live view's chips colour it (widgets/view.css, ``.anb-src-*``).
_CHIP = {"user": "#dcfce7", "instructions": "#ede9fe", "memory": "#fef9c3",
         "tool_result": "#dbeafe", "invented": "#e5e7eb", "steered": "#fecaca"}  # fmt: skip


def _chips(args: Mapping[str, Mapping[str, Any]]) -> str:
    """Under a call, where each argument came from, as the live view's chips say it."""
    chips = []
    for arg, a in args.items():
        kinds = list(a.get("k") or ["invented"])
        kind = "steered" if a.get("s") else kinds[0]
        text = f"{arg} ← {'⚑ ' if a.get('s') else ''}{'+'.join(kinds)}"
        ink = "#7f1d1d;font-weight:600" if kind == "steered" else "#111827"
        style = (
            f"background:{_CHIP.get(kind, '#e5e7eb')};color:{ink};border-radius:8px;padding:0 6px"
        )
        chips.append(f"<span class='anb-chip anb-src-{escape(kind)}' style='{style}'>"
                     f"{escape(text)}</span>")  # fmt: skip
    return (
        "<div class='anb-prov' style='padding-left:1em;color:#6b7280'>provenance: "
        + " ".join(chips)
        + "</div>"
    )


def _link(anchor: str, index: int | None, text: str, title: Any = None) -> str:
    """A link to message ``index``'s card (its text alone when there is no card to go to)."""
    hint = f" title='{escape(str(title))}'" if title else ""
    if not anchor or index is None:
        return f"<span{hint}>{escape(text)}</span>"
    return f"<a href='#{escape(anchor)}-{int(index)}'{hint}>{escape(text)}</a>"


_MARK = "background:#fde68a;color:inherit;border-bottom:2px solid #dc2626"


def _marked(text: str, value: Any, flags: Sequence[Mapping[str, Any]]) -> str:
    """A result's text with each flagged span in a ``<mark>``: JSON pretty-printed as the
    live view prints it (spans index the string at their JSON path), else the text as it is.
    Offsets are code points; every piece is escaped."""
    by_path: dict[str, list[Mapping[str, Any]]] = {}
    for f in flags:
        by_path.setdefault(str(f.get("path") or ""), []).append(f)

    def pieces(s: str, path: str, quoted: bool) -> str:
        code = (lambda t: json.dumps(t, ensure_ascii=False)[1:-1]) if quoted else (lambda t: t)
        found = sorted(by_path.get(path, ()), key=lambda f: int(f["start"]))
        if not found:
            return escape(json.dumps(s, ensure_ascii=False) if quoted else s)
        out, at = ['"' if quoted else ""], 0
        for f in found:
            start, end = int(f["start"]), int(f["end"])
            if start > at:
                out.append(escape(code(s[at:start])))
            why = escape(f"instruction found in data: {f.get('why', '')}")
            span = escape(code(s[max(at, start) : end]))
            out.append(f"<mark class='anb-injection' style='{_MARK}' title='{why}'>{span}</mark>")
            at = max(at, end)
        out.append(escape(code(s[at:])) + ('"' if quoted else ""))
        return "".join(out)

    if value is None:
        return pieces(text, "", False)
    lines: list[str] = []

    def walk(v: Any, path: str, depth: int, key: str | None, last: bool) -> None:
        pad = "  " * depth
        label = "" if key is None else escape(json.dumps(key, ensure_ascii=False)) + ": "
        comma = "" if last else ","
        if isinstance(v, dict | list):
            items = list(enumerate(v)) if isinstance(v, list) else list(v.items())
            if not items:
                lines.append(pad + label + ("[]" if isinstance(v, list) else "{}") + comma)
                return
            lines.append(pad + label + ("[" if isinstance(v, list) else "{"))
            for j, (k, x) in enumerate(items):
                sub = f"{path}[{k}]" if isinstance(v, list) else f"{path}.{k}" if path else str(k)
                walk(
                    x, sub, depth + 1, None if isinstance(v, list) else str(k), j == len(items) - 1
                )
            lines.append(pad + ("]" if isinstance(v, list) else "}") + comma)
        elif isinstance(v, str):
            lines.append(pad + label + pieces(v, path, True) + comma)
        else:
            lines.append(pad + label + escape(json.dumps(v, ensure_ascii=False)) + comma)

    walk(value, "", 0, None, True)
    return "\n".join(lines)


def transcript(
    wires: Iterable[Mapping[str, Any]],
    *,
    title: str = "",
    notes: Mapping[int, Sequence[str]] | None = None,
    start: int = 0,
    marks: Mapping[int, Mapping[str, Any]] | None = None,
) -> str:
    """A list of messages as cards, with an optional escaped title line.

    ``notes`` maps a message index to its warnings (``list[str]``; one string is accepted
    too): every warning is shown on its card. ``start`` is the index of the first message
    (when only the end of a long session is shown). ``marks``: provenance's marks by message
    index (:func:`message_card`), counted under the title; the cards they link to get ids
    unique to this transcript (a digest of its title).
    """
    notes = notes or {}
    marks = marks or {}
    wires = list(wires)
    final = _final(wires)
    anchor = ""
    if marks:
        anchor = "anb-" + hashlib.sha1(_json.shown(title).encode()).hexdigest()[:10]
    cards = [
        message_card(
            w,
            index=start + i,
            note=notes.get(start + i, ()),
            final=i == final,
            mark=marks.get(start + i),
            anchor=anchor,
        )
        for i, w in enumerate(wires)
    ]
    head = f"<div style='font-weight:bold;margin:4px 0'>{escape(title)}</div>" if title else ""
    shown = [marks[i] for i in range(start, start + len(wires)) if i in marks]
    flagged = sum(len(m.get("flags") or ()) for m in shown)
    steered = sum(len(m.get("steered") or ()) for m in shown)
    if flagged or steered:
        counts = f"⚑ {flagged} {'instruction' if flagged == 1 else 'instructions'} found in data"
        counts += f" · {steered} steered {'call' if steered == 1 else 'calls'}"
        head += f"<div class='anb-counts' style='color:#b91c1c;margin:4px 0'>{counts}</div>"
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
