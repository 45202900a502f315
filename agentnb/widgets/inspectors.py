"""Inspectors, each usable alone and reachable from the view.

- :class:`RequestInspector` - the exact request of model call k (messages, tools,
  parameters) and its token budget as a bar; with a model that can say what it understood
  (``model.understood(request)``, as ``TravelModel`` does), that table beside it.
- :class:`SnapshotDiff` - what changed between model calls j and k: messages appended,
  dropped or summarised, edited; instructions, tools and parameters.
- :class:`Timeline` - the events of a run with stage, latency bars and tokens.

Model calls are numbered from 1 in the order of ``session.requests``; -1 is the latest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import traitlets

from .. import _json
from ..messages import parse_message
from ..models import differ
from ..models.differ import changed_paths
from . import marks, payload
from .base import Widget

__all__ = ["RequestInspector", "SnapshotDiff", "Timeline", "diff_payload", "request_payload"]


def _call(session: Any, k: int) -> tuple[int, Any]:
    """Model call ``k`` (from 1; -1 is the latest) as its :class:`RequestRecord`."""
    calls = session.requests
    if not calls:
        raise ValueError(f"session {session.id!r} has no model calls yet: run the agent first")
    n = len(calls)
    number = n + 1 + k if k < 0 else k
    if not 1 <= number <= n:
        raise IndexError(f"model call {k} does not exist: this session has calls 1 to {n}")
    return number, calls[number - 1]


def _is_system(wire: Any) -> bool:
    return isinstance(wire, dict) and wire.get("role") in ("system", "developer")


def understood_payload(model: Any, request: Any) -> dict[str, Any] | None:
    """What ``model`` understood from ``request`` (``model.understood(request).payload()``),
    or None for a model that cannot say (any model but the stand-in)."""
    understood = getattr(model, "understood", None)
    if not callable(understood):
        return None
    table = understood(request)
    rows: dict[str, Any] | None = table.payload() if hasattr(table, "payload") else None
    return rows


def request_payload(session: Any, k: int, *, view: Any = None, model: Any = None) -> dict[str, Any]:
    """Model call ``k`` as the browser shows it: messages, tools, params, the budget that
    ``assemble`` recorded with it (``session.requests[k - 1].budget``), and what the model
    understood when it can say (``model``, else the model of the view's agent)."""
    number, record = _call(session, k)
    req = record.request
    wires = req.messages
    tokens = [parse_message(w).tokens for w in wires]
    if model is None:
        model = getattr(getattr(getattr(view, "driver", None), "agent", None), "model", None)
    understood = understood_payload(model, req)
    return _json.shown({  # lone surrogates as U+FFFD: the comm sends UTF-8
        "k": number,
        "n": len(session.requests),
        "messages": [{"w": w, "tok": t, "it": None} for w, t in zip(wires, tokens, strict=True)],
        "tools": payload.context(None, req.tools)["tools"],
        "params": req.params,
        "output": payload.output_format(req.output),
        "budget": dict(record.budget),
        "policy": record.policy,
        "note": record.note,
        **({"understood": understood} if understood is not None else {}),
    })  # fmt: skip


def diff_payload(session: Any, j: int, k: int) -> dict[str, Any]:
    """What changed from model call ``j`` to ``k``, aligned message by message."""
    nj, ra = _call(session, j)
    nk, rb = _call(session, k)
    a, b = ra.request, rb.request
    sa = a.messages[1:] if a.messages and _is_system(a.messages[0]) else a.messages
    sb = b.messages[1:] if b.messages and _is_system(b.messages[0]) else b.messages
    edited = marks.edit_marks(session)
    rows: list[dict[str, Any]] = []
    for op, i1, i2, j1, j2 in differ.message_opcodes(sa, sb):
        if op == "equal":
            rows.append({"op": "kept", "count": i2 - i1, "from": i1})
        elif op == "insert":
            rows += [{"op": "appended" if i1 == len(sa) else "inserted", "w": w} for w in sb[j1:j2]]
        elif op == "delete":
            rows += [{"op": "dropped", "w": w} for w in sa[i1:i2]]
        elif i2 - i1 == j2 - j1:  # same count: edited in place
            pairs = zip(sa[i1:i2], sb[j1:j2], strict=True)
            rows += [
                {"op": "edited", "w": new, "old": old, "changed": changed_paths(old, new)}
                for old, new in pairs
            ]
        else:  # several became fewer (or more): hand edits, else dropped or summarised
            rows += _unequal(sa[i1:i2], sb[j1:j2], edited, at_end=i2 == len(sa))
    for row in rows:  # a message a hand edit put there is the edit's, not the model's or tool's
        record = edited.get(id(row.get("w")))
        if record is not None:
            row["edit"] = marks.edit_mark(record)
    sys_a = a.messages[0] if a.messages and _is_system(a.messages[0]) else None
    sys_b = b.messages[0] if b.messages and _is_system(b.messages[0]) else None
    keys = set(a.params) | set(b.params)
    return _json.shown({  # lone surrogates as U+FFFD
        "j": nj,
        "k": nk,
        "n": len(session.requests),
        "rows": rows,
        "instructions_changed": sys_a != sys_b,
        "tools_changed": a.tools != b.tools,
        "params_changed": {
            key: [a.params.get(key), b.params.get(key)]
            for key in sorted(keys)
            if a.params.get(key) != b.params.get(key)
        },
    })  # fmt: skip


def _unequal(old: list[Any], new: list[Any], edited: dict[int, Any], at_end: bool) -> list[Any]:
    """Rows for a block that changed size: a new message a hand edit made from an old one is
    that one "edited"; the other old ones were dropped, the other new ones added."""
    keys = [differ.message_key(w) for w in old]
    pairs: dict[int, int] = {}
    for j, w in enumerate(new):
        record = edited.get(id(w))
        before = record.before if record is not None else None
        if before is not None and differ.message_key(before) in keys:
            i = keys.index(differ.message_key(before))
            pairs[j], keys[i] = i, ""
    added = "appended" if pairs and at_end else "summarised" if len(new) < len(old) else "inserted"
    rows: list[dict[str, Any]] = [
        {"op": "dropped", "w": w} for i, w in enumerate(old) if i not in pairs.values()
    ]
    for j, w in enumerate(new):
        if j in pairs:
            before = old[pairs[j]]
            rows.append(
                {"op": "edited", "w": w, "old": before, "changed": changed_paths(before, w)}
            )
        else:
            rows.append({"op": added, "w": w})
    return rows


class _Inspector(Widget):
    """An inspector over a session's model calls; the browser may ask for another call."""

    def __init__(self, session: Any, kind: str, view: Any = None) -> None:
        self.session = session
        self.view = view
        super().__init__(kind=kind)

    def _on_msg(self, content: dict[str, Any]) -> Any:
        if content.get("op") == "goto":
            self.show(*[int(x) for x in content.get("args", [])])
            return None
        raise ValueError(f"unknown message from the inspector: {content!r}")

    def show(self, *args: int) -> None:
        raise NotImplementedError


class RequestInspector(_Inspector):
    """The exact request of model call ``k`` (1-based; -1 is the latest) and its budget: the
    one a view of the session saw assembled (``view``, else any live view), else recomputed.
    ``model`` (default: the view's agent's) adds what it understood, if it can say."""

    def __init__(self, session: Any, k: int = -1, *, view: Any = None, model: Any = None) -> None:
        self.model = model
        super().__init__(session, "request", view)
        self.show(k)

    def show(self, *args: int) -> None:
        self.data = request_payload(self.session, args[0], view=self.view, model=self.model)


class SnapshotDiff(_Inspector):
    """What changed between model calls ``j`` and ``k`` (default: the last two)."""

    def __init__(self, session: Any, j: int = -2, k: int = -1) -> None:
        super().__init__(session, "diff")
        self.show(j, k)

    def show(self, *args: int) -> None:
        self.data = diff_payload(self.session, args[0], args[1])


class Timeline(Widget):
    """The events of a run: stage, latency bars and tokens; click an event to see it.

    ``source`` is a ``RunResult``, a ``Trace``, a list of events, or a ``SessionView``.
    """

    rows: Any = traitlets.List().tag(sync=True)

    def __init__(self, source: Any) -> None:
        super().__init__(kind="timeline")
        self.rows = self._rows(source)

    @staticmethod
    def _rows(source: Any) -> list[dict[str, Any]]:
        if hasattr(source, "timeline") and hasattr(source, "session"):  # a SessionView
            return list(source.timeline)
        events: Iterable[Any] = getattr(source, "events", source)
        return [payload.event_row(e) for e in events if e.type != "ModelDelta"]
