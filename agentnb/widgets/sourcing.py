"""Provenance marks for the view: instructions found in tool results, where each argument came
from, and which call a flagged span steered (:mod:`agentnb.provenance`).

Each message's payload gains ``pv`` when there is something to show: a tool result its
``flags`` (path in the JSON, span, rules, why), an assistant message its calls' ``args``
(argument path -> kinds, steered or not, and each source: label, message, path, the text
matched, confidence, and the flag it lies in). The browser draws the highlight, the link from a
steered call to the result it came from (and back), and the inspector on a click. A tracer per
view reads appended messages one by one (a message costs what tracing its values costs); an
edit starts it again. The view shows calls and results, so it leaves answers' claims
untraced (a long chat's figures would cost it a search each; ``session.provenance()`` has them).
"""

from __future__ import annotations

from typing import Any

from .. import provenance

__all__ = ["Sourcing", "mark"]


def _source(s: provenance.Source) -> dict[str, Any]:
    out: dict[str, Any] = {
        "k": s.kind,
        "l": s.label,
        "i": s.message,
        "p": s.path,
        "t": s.text[:120],
        "c": round(s.confidence, 2),
    }
    if s.call_id is not None:
        out["call"] = s.call_id
    if s.flag is not None:
        out["why"] = s.flag.flag.why
    return out


def mark(values: list[provenance.Value], flags: list[provenance.Flagged]) -> dict[str, Any] | None:
    """The ``pv`` payload of one message from what the tracer found in it."""
    out: dict[str, Any] = {}
    if flags:
        out["flags"] = [f.mark() for f in flags]
    args: dict[str, dict[str, Any]] = {}
    for v in values:
        if v.call_id is None:
            continue
        args.setdefault(v.call_id, {})[v.arg] = {
            "k": list(v.kinds),
            "s": v.steered,
            "src": [_source(s) for s in v.sources[:6]],
        }
    if args:
        out["args"] = args
    return out or None


class Sourcing:
    """A session's provenance, kept current for its view (see the module)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.reset()

    def reset(self) -> None:
        self.tracer = provenance.Tracer(provenance.heads(self.session.requests), claims=False)
        self.read = 0

    def add(self, index: int, wire: dict[str, Any]) -> dict[str, Any] | None:
        """The ``pv`` of message ``index``, just appended (earlier ones read first if missed)."""
        if index != self.read:
            self.catch_up(index)
        if index != self.read:
            return None
        self.tracer.head = provenance.heads(self.session.requests)
        values, flags = self.tracer.add(index, wire)
        self.read += 1
        return mark(values, flags)

    def catch_up(self, upto: int) -> None:
        wires = self.session.wire()
        if upto < self.read:
            self.reset()
        self.tracer.head = provenance.heads(self.session.requests)
        while self.read < min(upto, len(wires)):
            self.tracer.add(self.read, wires[self.read])
            self.read += 1

    def marks(self) -> list[dict[str, Any] | None]:
        """Every message's ``pv``, traced afresh (a late view's snapshot)."""
        self.reset()
        out = []
        for i, wire in enumerate(self.session.wire()):
            values, flags = self.tracer.add(i, wire)
            out.append(mark(values, flags))
        self.read = len(out)
        return out
