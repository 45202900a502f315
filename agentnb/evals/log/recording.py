"""Recording experiments: where the log is (``log=``), and each evaluation written when its
sweep ends, each optimisation when it stops.

``log=`` is one argument everywhere an experiment is made (``an.evaluate``,
``an.evals.start``, ``an.optimize``, ``ev.rescore``, ``an.evals.noise``):

* ``None`` (the default): ``$AGENTNB_LOG`` when set (a path, or ``off``), else
  ``agentnb-experiments.sqlite`` in the working directory;
* ``False``: nothing is recorded, nothing written;
* a path, an :class:`~agentnb.SQLiteStore` or a ``PostgresStore``, or an
  :class:`~agentnb.evals.ExperimentLog`: there.

The place is opened when the experiment starts (a place that cannot be used is refused then,
before anything runs), and written once, when it ends: nothing is written anywhere else. A
log that fails to record (a full disk, a lost server) says so in a :class:`LogWarning`; the
evaluation itself is never lost for it. An evaluation in the log knows its entry
(``ev.experiment``): a label set on it later, or a judge flagged, is written there too.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError
from .identity import code_version, identify
from .store import ExperimentLog

if TYPE_CHECKING:
    from ..evaluation import Evaluation
    from ..record import EvalRecord

__all__ = ["DEFAULT", "ENV", "LogEntry", "LogWarning", "chosen", "follow", "record"]

ENV = "AGENTNB_LOG"
DEFAULT = "agentnb-experiments.sqlite"
_OFF = {"off", "0", "false", "no", "none"}


class LogWarning(UserWarning):
    """The experiment log could not record something (the experiment itself is intact)."""


@dataclass
class LogEntry:
    """An evaluation's entry in the log (``ev.experiment``): its id and the log, and where
    each row is kept."""

    id: str
    log: ExperimentLog
    kind: str
    positions: dict[tuple[str, str, int], int] = field(default_factory=dict)
    source: str | None = None
    note: str = ""
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def commit(self) -> str | None:
        return self.body.get("commit")

    @property
    def dirty(self) -> bool | None:
        return self.body.get("dirty")

    def rewrite(self, row: EvalRecord) -> None:
        """Write ``row``'s run records to the log again (a label changed on them)."""
        position = self.positions.get(row.key)
        if position is not None:
            self.log.update_row(self.id, position, [x.to_dict() for x in row.runs])

    def flag(self, flags: dict[str, str]) -> None:
        """Write the evaluation's flagged checks (``ev.flags``) to its entry."""
        self.log.update(self.id, flags=dict(flags))
        self.body["flags"] = dict(flags)

    def __repr__(self) -> str:
        return f"<LogEntry {self.id} ({self.kind}) in {self.log.where}>"


def chosen(log: Any, *, reading: bool = False) -> ExperimentLog | None:
    """The log ``log=`` names (see the module docstring); None for none. ``reading``: the
    default place is not created just to be read (None when it does not exist)."""
    if log is False:
        return None
    if isinstance(log, ExperimentLog):
        return log
    if log is None:
        env = os.environ.get(ENV)
        if env is not None and env.strip().lower() in _OFF | {""}:
            return None
        path = Path(env) if env else Path.cwd() / DEFAULT
        if reading and not path.exists():
            return None
        return ExperimentLog(path)
    if log is True:
        return chosen(None, reading=reading)
    return ExperimentLog(log)


def follow(
    ev: Evaluation,
    log: Any,
    note: str = "",
    *,
    kind: str = "evaluation",
    extra: dict[str, Any] | None = None,
) -> ExperimentLog | None:
    """Record ``ev`` in the log ``log=`` names when its sweep ends (opened now: a bad place is
    refused before the sweep). Returns the log, or None when there is none."""
    if not isinstance(note, str):
        raise ConfigurationError(f"a note is text, not {note!r:.60}")
    place = chosen(log)
    if place is None:
        return None
    version = code_version()

    def ended(row: EvalRecord | None) -> None:
        if row is None:
            record(ev, place, kind=kind, note=note, version=version, extra=extra)

    ev.subscribe(ended)
    return place


def record(
    ev: Evaluation,
    log: ExperimentLog,
    *,
    kind: str = "evaluation",
    note: str = "",
    source: str | None = None,
    version: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> LogEntry | None:
    """Write ``ev`` to ``log`` now, as an experiment of ``kind``; its entry, also set as
    ``ev.experiment`` (None, with a :class:`LogWarning`, when the log failed)."""
    body = {**identify(ev, version or code_version()), **(extra or {})}
    experiment_id = "e-" + os.urandom(4).hex()
    rows = [(ev.kept(r).session, [x.to_dict() for x in r.runs]) for r in ev.records]
    try:
        log.add(experiment_id, kind, body, rows, note=note, source=source)
    except Exception as exc:
        warnings.warn(
            f"the experiment log {log.where} could not record this {kind}: {exc}. It is not "
            "in the log; ev.save(path) keeps it in a file",
            LogWarning,
            stacklevel=2,
        )
        return None
    positions = {r.key: i for i, r in enumerate(ev.records)}
    entry = LogEntry(experiment_id, log, kind, positions, source, note, body)
    ev.experiment = entry
    return entry


def kept_file(variants: Any) -> dict[str, Any] | None:
    """What the log keeps of the variants file ``variants`` came from (its path, text and
    digest: :func:`agentnb.evals.load_variants`), or None."""
    file = getattr(variants, "file", None)
    return {"variants_file": file} if isinstance(file, dict) else None
