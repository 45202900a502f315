"""Human labels: a person's verdict on a run's answer, kept as an annotation on its record.

    ev.label("terse", "weather-fri", 0, "fail", "gives no temperature")   # in code
    ev.outputs()                           # or in the grid: ✓ / ✗ and a note under each answer
    ev.labels                              # a DataFrame of every label
    an.checks.human()                      # the label as a check (rescore with it)

A label says what a rater (``"human"`` by default; any name, for several people) thought of
one run: ``pass`` or ``fail`` and a free-text note. It is written, here and nowhere else, as
``record.annotations["labels"]`` on the record of the task's run (one label per rater, the
latest kept), as plain data: it is saved with the run (``ev.save``), read back by
``Evaluation.load``, kept in the experiment log, and an evaluation read from the log writes a
new label back there. Labelling never changes the run's outcome (that is its checks'):
``an.checks.human()`` makes the label a check, and ``ev.agreement("judge", "human")`` reads
labels beside a judge's verdicts (:mod:`agentnb.evals.agreement`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..session import RunRecord

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KEY", "VERDICTS", "Label", "label", "labels", "labels_frame"]

#: Where labels live in ``record.annotations``.
KEY = "labels"
VERDICTS = ("pass", "fail")
_SAID = {
    True: "pass",
    False: "fail",
    "pass": "pass",
    "fail": "fail",
    "good": "pass",
    "bad": "fail",
    "✓": "pass",
    "✗": "fail",
}


@dataclass(frozen=True)
class Label:
    """One rater's verdict on one run: ``pass`` or ``fail``, a note, and when (Unix time)."""

    rater: str
    verdict: str
    note: str = ""
    at: float = 0.0

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "note": self.note, "at": self.at}


def verdict_of(value: Any) -> str:
    """``"pass"`` or ``"fail"`` from what a person may say (True/False, pass/fail, good/bad)."""
    said = _SAID.get(value.strip().lower() if isinstance(value, str) else value)
    if said is None:
        raise ConfigurationError(
            f"a label is 'pass' or 'fail' (True/False, 'good'/'bad' too), not {value!r}"
        )
    return said


def label(record: RunRecord, verdict: Any, note: str = "", *, rater: str = "human") -> Label | None:
    """Label the run of ``record``: the one place labels are written. ``verdict=None``
    removes ``rater``'s label (returns None)."""
    if not isinstance(rater, str) or not rater.strip():
        raise ConfigurationError(f"a rater is a non-empty name, not {rater!r}")
    if not isinstance(note, str):
        raise ConfigurationError(f"a label's note is text, not {note!r:.60}")
    if record.annotations is None:
        record.annotations = {}
    kept = dict(record.annotations.get(KEY) or {})
    if verdict is None:
        kept.pop(rater, None)
        made = None
    else:
        made = Label(rater, verdict_of(verdict), note, time.time())
        kept[rater] = made.to_dict()
    if kept:
        record.annotations[KEY] = kept
    else:
        record.annotations.pop(KEY, None)
    return made


def labels(record: RunRecord) -> dict[str, Label]:
    """Every rater's label on the run of ``record`` (read from its annotation, also one read
    back from a file or the log)."""
    found = (record.annotations or {}).get(KEY)
    if not isinstance(found, Mapping):
        return {}
    out = {}
    for rater, data in found.items():
        if isinstance(data, Mapping) and data.get("verdict") in VERDICTS:
            at = data.get("at")
            when = float(at) if isinstance(at, int | float) else 0.0
            out[str(rater)] = Label(str(rater), data["verdict"], str(data.get("note") or ""), when)
    return out


def labels_frame(ev: Any) -> pd.DataFrame:
    """``ev.labels``: one row per label of ``ev``'s runs."""
    import pandas as pd

    rows = [
        {
            "variant": r.variant,
            "task": r.task,
            "repeat": r.repeat,
            "rater": found.rater,
            "verdict": found.verdict,
            "note": found.note,
            "outcome": r.outcome,
        }
        for r in ev.records
        for found in labels(r.run).values()
    ]
    columns = ["variant", "task", "repeat", "rater", "verdict", "note", "outcome"]
    return pd.DataFrame(rows, columns=columns)
