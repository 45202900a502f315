"""Every answer at a glance: ``ev.outputs()``, tasks × variants, repeats stacked.

    grid = ev.outputs()         # evaluating it in a notebook shows the grid
    grid.frame                  # a DataFrame: one row per task, one column per variant
    grid.cell("weather-fri", "terse")   # the runs of one cell: answer, outcome, failed checks
    ev.outputs(failed=True)     # only the tasks some run failed (or errored): what to read

Each cell holds the answers of that task and variant, one per repeat: the first lines shown,
the whole answer a click away (``<details>``, no JavaScript needed), a failed run marked
with its failed checks (a flagged judge's marked ⚑), an error run with its error, and the
labels people gave it. A conversation (a task with a user) is one row like any task: its last
answer, and its turns a click away (what the user said, by which rule, and each answer), with
how it stopped (user_done, user_gave_up, max_turns). In a kernel with the widgets the grid is
live (:class:`agentnb.widgets.OutputsGrid`): ✓ / ✗ and a note under each answer label its run.
The HTML escapes every answer (the one character rule of :mod:`agentnb._html`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..display import Shown, escape, static
from .labels import labels
from .tables import flagged

if TYPE_CHECKING:
    import pandas as pd

    from .evaluation import Evaluation
    from .record import EvalRecord

__all__ = ["Outputs", "prompt_diff_html"]

_MARK = {"pass": ("✓", "#16a34a"), "fail": ("✗", "#dc2626"), "error": ("!", "#6b7280")}
#: Lines of an answer shown before the rest folds.
FIRST_LINES = 3


@dataclass
class Outputs(Shown):
    """The answers of an evaluation, task × variant (see the module docstring)."""

    evaluation: Evaluation
    #: The tasks shown (None: every task), in the task set's order.
    only: tuple[str, ...] | None = None

    @property
    def tasks(self) -> list[str]:
        """The tasks this grid shows, in the task set's order."""
        names = list(self.evaluation.tasks.names)
        return names if self.only is None else [t for t in names if t in self.only]

    def cell(self, task: str, variant: str) -> list[EvalRecord]:
        """The runs of one (task, variant), by repeat."""
        runs = [r for r in self.evaluation.records if r.task == task and r.variant == variant]
        return sorted(runs, key=lambda r: r.repeat)

    @property
    def frame(self) -> pd.DataFrame:
        """One row per task, one column per variant: each cell the list of answers by
        repeat (``None`` for a run that gave none)."""
        import pandas as pd

        ev = self.evaluation
        rows = {
            task: {v: [r.output for r in self.cell(task, v)] for v in ev.variants}
            for task in self.tasks
        }
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=ev.variants)
        frame.index.name = "task"
        return frame

    def _run_html(self, r: EvalRecord) -> str:
        mark, colour = _MARK[r.outcome]
        text = r.output if r.output is not None else ""
        lines = text.split("\n")
        head = "\n".join(lines[:FIRST_LINES])
        more = len(lines) > FIRST_LINES or len(head) > 240
        ev = self.evaluation
        why = "; ".join(f"{flagged(ev, c.name)}: {c.reason}" for c in r.failed_checks) or r.error
        badge = (
            f"<span style='color:{colour};font-weight:bold' title='{escape(why)}'>{mark}"
            f"{'' if self.evaluation.repeats == 1 else f' #{r.repeat}'}</span> "
        )
        failed = (
            f"<div style='color:{colour};font-size:11px'>{escape(why[:300])}</div>" if why else ""
        )
        if not text:
            body = "<i style='color:#6b7280'>(no answer)</i>"
        elif more:  # the first lines, the rest when opened
            cut = len(head) > 240
            rest = text if cut else "\n".join(lines[FIRST_LINES:])
            body = (
                f"<details><summary style='white-space:pre-wrap'>{escape(head[:240])}"
                f"{'…' if cut else ''}</summary>"
                f"<div style='white-space:pre-wrap'>{escape(rest)}</div></details>"
            )
        else:
            body = f"<span style='white-space:pre-wrap'>{escape(text)}</span>"
        border = "#fecaca" if r.outcome != "pass" else "#e5e7eb"
        said = "".join(
            f"<div class='anb-label' style='font-size:11px;color:#6b7280'>{escape(x.rater)}: "
            f"{'✓ pass' if x.passed else '✗ fail'}{' — ' + escape(x.note) if x.note else ''}</div>"
            for x in labels(r.run).values()
        )
        return (
            f"<div class='anb-output anb-output-{r.outcome}' style='border-left:3px solid "
            f"{border};padding:2px 4px;margin:2px 0'>{badge}{body}{failed}{said}"
            f"{_turns_html(r)}</div>"
        )

    def html(self) -> str:
        ev = self.evaluation
        head = "".join(f"<th>{escape(v)}</th>" for v in ev.variants)
        rows = []
        for task in self.tasks:
            cells = "".join(
                "<td style='vertical-align:top;text-align:left;max-width:420px'>"
                + ("".join(self._run_html(r) for r in self.cell(task, v)) or "…")
                + "</td>"
                for v in ev.variants
            )
            name = f"<th style='vertical-align:top;text-align:left'>{escape(task)}</th>"
            rows.append(f"<tr>{name}{cells}</tr>")
        return (
            "<table class='agentnb-outputs' style='font-size:12px;border-collapse:collapse'>"
            f"<caption style='text-align:left'>{self.what()}, "
            f"✓ pass ✗ fail ! error (hover a mark for the failed checks)</caption>"
            f"<tr><th>task</th>{head}</tr>{''.join(rows)}</table>"
        )

    def what(self) -> str:
        """What the grid holds, in words (its caption)."""
        ev = self.evaluation
        if self.only is None:
            return f"every answer: {len(ev.records)} runs"
        shown = sum(r.task in self.only for r in ev.records)
        return f"the {len(self.tasks)} of {len(ev.tasks)} tasks some run failed: {shown} runs"

    def __repr__(self) -> str:
        ev = self.evaluation
        failed = "" if self.only is None else f" (of {len(ev.tasks)}, those some run failed)"
        return f"<Outputs {len(self.tasks)} tasks{failed} × {len(ev.variants)} variants>"

    def static_bundle(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """The answers as a table of text, and as escaped HTML."""
        text = lambda: self.frame.to_string()  # noqa: E731
        return static(text, self.html, include=include, exclude=exclude)


def _turns_html(r: EvalRecord) -> str:
    """A conversation's turns, folded: each user turn (its rule) and the answer to it."""
    talk = r.conversation
    if talk is None:
        return ""
    answers = talk.answers
    items = []
    for i, turn in enumerate(talk.user):
        how = f" <i style='color:#6b7280'>[{escape(turn.by)}: {escape(turn.rule)}]</i>"
        items.append(f"<div class='anb-turn-user'><b>user</b>{how} {escape(turn.text)}</div>")
        if i < len(answers):
            items.append(f"<div class='anb-turn-agent' style='white-space:pre-wrap;color:#374151'>"
                         f"<b>agent</b> {escape(answers[i])}</div>")  # fmt: skip
    head = f"{len(talk)} turn{'s' if len(talk) != 1 else ''} · {escape(talk.stop_reason or '')}"
    return (
        f"<details class='anb-turns'><summary style='font-size:11px;color:#4338ca'>{head}"
        f"</summary>{''.join(items)}</details>"
    )


def prompt_diff_html(diff: dict[str, Any]) -> str:
    """A prompt diff (:meth:`Comparison.prompt_diff`) as highlighted HTML: removed lines
    red, added green, the changed words inside them marked."""
    parts = []
    for title, rows in [
        ("instructions", diff.get("instructions") or []),
        *((f"tool {n}", r) for n, r in (diff.get("tools") or {}).items()),
    ]:
        if not rows:
            continue
        parts.append(f"<div style='font-weight:bold;margin-top:4px'>{escape(title)}</div>")
        for row in rows:
            text = row["text"]
            marked, at = "", 0
            for a, b in row.get("spans") or ():
                marked += escape(text[at:a]) + f"<mark>{escape(text[a:b])}</mark>"
                at = b
            marked += escape(text[at:])
            style = {
                "removed": "background:#fef2f2;color:#991b1b",
                "added": "background:#ecfdf5;color:#065f46",
            }.get(row["op"], "color:#6b7280")
            sign = {"removed": "−", "added": "+"}.get(row["op"], " ")
            look = f"white-space:pre-wrap;font-family:monospace;{style}"
            parts.append(f"<div style='{look}'>{sign} {marked}</div>")
    return "<div class='agentnb-prompt-diff'>" + "".join(parts) + "</div>" if parts else ""
