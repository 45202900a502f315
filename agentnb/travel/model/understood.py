"""``TravelModel.understood(request)``: the knobs a request set, each with the line that set it,
and the lines the stand-in did not understand. A table in a notebook; plain text in a print."""

from __future__ import annotations

import html
import textwrap
from typing import Any

from ...display import Shown
from .knobs import KNOBS, Policy

__all__ = ["Understood"]

COLUMNS = ["knob", "value", "set by", "where", "effect"]


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return ", ".join(value) if value else "none"
    return str(value)


def _effect(knob: str, value: Any) -> str:
    effects = next(k.effects for k in KNOBS if k.name == knob)
    key = _shown(value)
    return effects.get(key) or next((v for k, v in effects.items() if k.startswith("<")), "")


_DEFAULT = {k.name: k.default for k in KNOBS}


class Understood(Shown):
    """What the stand-in read from a request: ``.frame`` (a DataFrame, one row per knob, the
    knobs a line set first), ``.not_understood`` (the lines that set nothing, with where they
    were), ``table["hotel_choice"]`` (a knob's value)."""

    def __init__(self, policy: Policy) -> None:
        import pandas as pd

        self.policy = policy
        values = policy.values()
        rows = []
        for knob in sorted(values, key=lambda k: k not in policy.set_by):
            line, where = policy.set_by.get(knob, ("(default)", ""))
            if knob in policy.set_by:
                value = _shown(values[knob])
                rows.append([knob, value, line, where, _effect(knob, values[knob])])
            else:  # a default shows as the default, with the effect it really has
                default = _DEFAULT[knob]
                rows.append([knob, default, line, where, _effect(knob, default)])
        self.frame = pd.DataFrame(rows, columns=COLUMNS).set_index("knob")
        self.not_understood: list[tuple[str, str]] = list(policy.not_understood)
        self.title = "What TravelModel understood"

    def __getitem__(self, knob: str) -> Any:
        return self.policy.values()[knob]

    def __contains__(self, knob: object) -> bool:
        return knob in self.policy.set_by

    @property
    def set(self) -> dict[str, Any]:
        """The knobs some line set (knob -> value)."""
        values = self.policy.values()
        return {k: values[k] for k in self.policy.set_by}

    def payload(self) -> dict[str, Any]:
        """Plain rows for a view (the request inspector)."""
        rows = [{"knob": str(k), **{c: str(v) for c, v in r.items()}}
                for k, r in self.frame.iterrows()]  # fmt: skip
        missed = [{"line": a, "where": b} for a, b in self.not_understood]
        return {"title": self.title, "rows": rows, "not_understood": missed}

    def __repr__(self) -> str:
        lines = [self.title, ""]
        for knob, row in self.frame.iterrows():
            if row["where"]:
                lines.append(f"{knob} = {row['value']}  [{row['where']}]")
                lines.append(textwrap.fill(row["set by"], 92, initial_indent="    set by: ",
                                           subsequent_indent=" " * 12))  # fmt: skip
            else:
                lines.append(f"{knob} = {row['value']}  (default)")
        lines.append("")
        lines.append(f"not understood ({len(self.not_understood)}):")
        lines += [f"    [{where}] {line}" for line, where in self.not_understood] or ["    —"]
        return "\n".join(lines)

    def static_html(self) -> str:
        import pandas as pd

        with pd.option_context("display.max_colwidth", None):
            table = self.frame.to_html(escape=True, border=0)
        left = '<td style="text-align: left">'  # Jupyter right-aligns cells: these are lines
        table = table.replace("<td>", left).replace("<th>", '<th style="text-align: left">')
        missed = "".join(
            f"<li>[{html.escape(w)}] {html.escape(line)}</li>" for line, w in self.not_understood
        )
        head = f"<h4>{html.escape(self.title)}</h4>{table}"
        n = len(self.not_understood)
        return f"{head}<p><b>Not understood ({n}):</b></p><ul>{missed or '<li>—</li>'}</ul>"
