"""``session.provenance()``: every traced value of a session and every instruction found in its
data, with the questions a lesson or a check asks of them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from .. import _html
from .sources import Flagged, Value

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
