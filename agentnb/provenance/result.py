"""``session.provenance()``: every traced value of a session and every instruction found in its
data, with the questions a lesson or a check asks of them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .. import _html
from .sources import Flagged, Value, parsed, text_of

__all__ = ["Provenance"]


class Provenance(Sequence[Value]):
    """The values of a session (or of one run) with their sources, and the flags found.

    ``prov.of("search_hotels", "city")`` the values of one argument; ``prov.invented`` the
    values found in nothing the model was given; ``prov.steered`` those that came only from an
    instruction found in data; ``prov.flags`` every such instruction; ``prov.rows()`` (or
    ``to_frame()``) one row per value. Shows as a table in a notebook."""

    def __init__(self, values: Sequence[Value], flags: Sequence[Flagged]) -> None:
        self.values = list(values)
        self.flags = list(flags)

    def __getitem__(self, index: Any) -> Any:
        return self.values[index]

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[Value]:
        return iter(self.values)

    def of(
        self,
        tool: str | None = None,
        arg: str | None = None,
        *,
        call: str | None = None,
        answer: bool | None = None,
    ) -> list[Value]:
        """The values of ``tool``'s argument ``arg`` (a JSON path: ``items[0].label``; an
        argument also selects the paths under it), of one ``call``, or the answers' figures
        (``answer=True``)."""
        out = []
        for v in self.values:
            if tool is not None and v.tool != tool:
                continue
            if call is not None and v.call_id != call:
                continue
            if answer is not None and (v.call_id is None) != answer:
                continue
            if arg is not None and not (v.arg == arg or v.arg.startswith((arg + ".", arg + "["))):
                continue
            out.append(v)
        return out

    @property
    def calls(self) -> list[Value]:
        """The values of tool-call arguments."""
        return [v for v in self.values if v.call_id is not None]

    @property
    def answers(self) -> list[Value]:
        """The figures and entities of assistant texts."""
        return [v for v in self.values if v.call_id is None]

    @property
    def invented(self) -> list[Value]:
        return [v for v in self.values if v.invented]

    @property
    def steered(self) -> list[Value]:
        return [v for v in self.values if v.steered]

    def rows(self) -> list[dict[str, Any]]:
        """One row per value: where, its value, its sources' labels, kinds, confidence,
        whether steered."""
        return [
            {
                "message": v.message,
                "call": v.call_id or "",
                "where": v.where,
                "value": v.value,
                "sources": ", ".join(
                    dict.fromkeys(
                        s.label + (f" {s.path}" if s.path and s.kind == "tool_result" else "")
                        for s in v.sources
                    )
                )
                or "invented",
                "kinds": "+".join(v.kinds),
                "confidence": round(v.confidence, 2),
                "steered": v.steered,
            }
            for v in self.values
        ]

    def marks(self, wires: Sequence[Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
        """What a transcript of ``wires`` (the conversation traced) marks, by message index: a
        result's or memory's ``flags`` (JSON path, span, rules, why) with the ``text`` they
        index and its JSON ``value`` (None for plain text), and the calls it ``steers``; an
        assistant message's ``steered`` calls (call id -> each argument and the flagged span
        it came from) and its calls' ``args`` (call id -> each traced argument's kinds, as the
        live view's chips say them: ``invented`` when found nowhere, and whether steered).
        Plain data: :func:`agentnb.display.transcript_bundle` draws it."""
        out: dict[int, dict[str, Any]] = {}
        for v in self.values:
            if v.call_id is not None:
                args = out.setdefault(v.message, {}).setdefault("args", {})
                args.setdefault(v.call_id, {})[v.arg] = {"k": list(v.kinds), "s": v.steered}
        for f in self.flags:
            if not 0 <= f.message < len(wires):
                continue
            mark = out.setdefault(f.message, {})
            if "flags" not in mark:
                mark["text"] = text_of(wires[f.message].get("content"))
                mark["value"] = parsed(mark["text"])
                mark["flags"] = []
            mark["flags"].append(f.mark())
        for v in self.steered:
            if v.call_id is None:
                continue
            steered = out.setdefault(v.message, {}).setdefault("steered", {})
            for s in v.sources:
                assert s.flag is not None  # a steered value's every source is flagged
                link = {"arg": v.arg, "i": s.message, "from": s.label, "path": s.path}
                link["why"] = s.flag.flag.why
                if link not in (found := steered.setdefault(v.call_id, [])):
                    found.append(link)
                if s.message is not None:
                    steers = out.setdefault(s.message, {}).setdefault("steers", [])
                    back = {"at": v.message, "call": v.call_id, "tool": v.tool, "arg": v.arg}
                    if back not in steers:
                        steers.append(back)
        return out

    def to_frame(self) -> Any:
        """:meth:`rows` as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows())

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": [v.to_dict() for v in self.values],
            "flags": [f.to_dict() for f in self.flags],
        }

    def __repr__(self) -> str:
        lines = [
            f"<Provenance: {len(self.values)} values, {len(self.invented)} invented, "
            f"{len(self.steered)} steered, {len(self.flags)} instructions found in data>"
        ]
        for row in self.rows()[:40]:
            value = json.dumps(row["value"], ensure_ascii=False)
            mark = "  ⚑ steered" if row["steered"] else ""
            lines.append(
                f"  #{row['message']} {row['where']} = {value[:40]} <- {row['sources']}{mark}"
            )
        if len(self.values) > 40:
            lines.append(f"  … {len(self.values) - 40} more")
        for f in self.flags:
            lines.append(
                f"  ⚑ #{f.message} {f.label}: {f.flag.text[:60]!r} ({', '.join(f.flag.rules)})"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = [{**r, "value": json.dumps(r["value"], ensure_ascii=False)} for r in self.rows()]
        title = (
            f"provenance: {len(self.values)} values, {len(self.invented)} invented, "
            f"{len(self.steered)} steered"
        )
        out = _html.table(rows, title=title)
        if self.flags:
            flags = [
                {
                    "message": f.message,
                    "where": f.label,
                    "text": f.flag.text,
                    "rules": ", ".join(f.flag.rules),
                    "why": f.flag.why,
                }
                for f in self.flags
            ]
            out += _html.table(flags, title=f"{len(self.flags)} instructions found in data")
        return out
