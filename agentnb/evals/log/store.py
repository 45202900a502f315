"""ExperimentLog: experiments kept in a store's database, beside the sessions of their runs.

An experiment is a row of ``agentnb_experiments`` (its id, when, its kind, the experiment
it came from, its note, and a JSON body: what identifies it, :mod:`.identity`) and one row
of ``agentnb_experiment_runs`` per (variant, task, repeat): the session the runs were made
on and the records of those runs (:meth:`~agentnb.session.RunRecord.to_dict`: tags, usage,
the checks' annotation, labels). The sessions' messages are stored as the store keeps any
session (``store.load(session_id)`` opens one), once, whichever experiments link to it: a
rescore links to the runs of its source. Nothing is copied that the runs hold.

The tables are named ``agentnb_*`` in SQLite and Postgres alike (the sessions' own tables
are the store's): an :class:`~agentnb.SQLiteStore` keeps them in its file, a
:class:`~agentnb.storage.postgres.PostgresStore` where every worker reaches them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...display import Shown, escape
from ...errors import ConfigurationError, StoreError
from ...session import Session
from ...storage import SQLiteStore, SQLStore, Statements, dumps

__all__ = ["ExperimentLog"]

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS agentnb_experiments (id TEXT PRIMARY KEY, "
    "created DOUBLE PRECISION NOT NULL, kind TEXT NOT NULL, source TEXT, note TEXT NOT NULL, "
    "body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS agentnb_experiment_runs (experiment_id TEXT NOT NULL, "
    "position INTEGER NOT NULL, session_id TEXT, runs TEXT NOT NULL, "
    "PRIMARY KEY (experiment_id, position))",
]


class ExperimentLog(Shown):
    """The experiment log in ``place``: a path (a SQLite file, created when first written)
    or a SQL store (:class:`~agentnb.SQLiteStore`, :class:`~agentnb.storage.postgres.
    PostgresStore`). See :mod:`agentnb.evals.log`."""

    def __init__(self, place: str | os.PathLike[str] | SQLStore) -> None:
        if isinstance(place, SQLStore):
            self.store: SQLStore = place
        elif isinstance(place, str | os.PathLike):
            path = Path(place)
            if path.is_dir():
                raise ConfigurationError(
                    f"the experiment log is a file (a SQLite database), and {path} is a folder: "
                    f"give a file path, e.g. {path / 'agentnb-experiments.sqlite'}"
                )
            self.store = SQLiteStore(path)
        else:
            raise ConfigurationError(
                "an experiment log is a file path or a SQL store (an.SQLiteStore(path), "
                f"PostgresStore(url)), or False for none; not {place!r:.80}"
            )
        db = self.store.db

        def create(run: Statements) -> None:
            if db.dialect == "postgres":  # CREATE ... IF NOT EXISTS races between processes
                run("SELECT pg_advisory_xact_lock(7242041)")
            for statement in _SCHEMA:
                run(statement)

        if not getattr(self.store, "read_only", False):
            db.write("set up the experiment log in", create)

    @property
    def where(self) -> str:
        """The place, in words (never a password)."""
        path = getattr(self.store, "path", None)
        return str(path) if path is not None else repr(self.store)

    # -- writing ------------------------------------------------------------------------------
    def add(
        self,
        experiment_id: str,
        kind: str,
        body: dict[str, Any],
        rows: Iterable[tuple[Session | None, list[dict[str, Any]]]],
        *,
        note: str = "",
        source: str | None = None,
    ) -> None:
        """Record one experiment: its body and its rows (each row's session, stored once,
        and the records of its runs), in one transaction after the sessions."""
        kept = []
        for position, (session, runs) in enumerate(rows):
            sid = None
            if session is not None:
                sid = session.id
                if self.store.version(sid) == 0 and len(session):
                    self.store.commit(sid, 0, session.wire())
            kept.append((experiment_id, position, sid, dumps(runs)))
        text = dumps(body)

        def work(run: Statements) -> None:
            run(
                "INSERT INTO agentnb_experiments (id, created, kind, source, note, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (experiment_id, time.time(), kind, source, note, text),
            )
            if kept:
                run.many(
                    "INSERT INTO agentnb_experiment_runs (experiment_id, position, session_id, "
                    "runs) VALUES (?, ?, ?, ?)",
                    kept,
                )

        self.store.db.write(f"record experiment {experiment_id} in", work, text)

    def update_row(self, experiment_id: str, position: int, runs: list[dict[str, Any]]) -> None:
        """The records of one row again (a label was set on its run)."""
        self.store.db.run(
            f"update a run of experiment {experiment_id} in",
            "UPDATE agentnb_experiment_runs SET runs = ? WHERE experiment_id = ? AND position = ?",
            (dumps(runs), experiment_id, position),
        )

    def update(self, experiment_id: str, *, note: str | None = None, **body: Any) -> None:
        """Change an experiment's note, or entries of its body (flags)."""
        entry = self.entry(experiment_id)
        if body:
            merged = {**entry["body"], **body}
            self.store.db.run(
                f"update experiment {experiment_id} in",
                "UPDATE agentnb_experiments SET body = ? WHERE id = ?",
                (dumps(merged), entry["id"]),
            )
        if note is not None:
            self.store.db.run(
                f"update experiment {experiment_id} in",
                "UPDATE agentnb_experiments SET note = ? WHERE id = ?",
                (note, entry["id"]),
            )

    # -- reading ------------------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        """Every experiment, oldest first: id, created, kind, source, note, body."""
        rows = self.store.db.run(
            "list the experiments of",
            "SELECT id, created, kind, source, note, body FROM agentnb_experiments "
            "ORDER BY created, id",
        )
        return [_entry(row) for row in rows]

    def entry(self, experiment_id: str) -> dict[str, Any]:
        """One experiment by its id, or by the one id it begins."""
        rows = self.store.db.run(
            f"read experiment {experiment_id!r} from",
            "SELECT id, created, kind, source, note, body FROM agentnb_experiments "
            "WHERE id = ? OR substr(id, 1, ?) = ? ORDER BY id",
            (experiment_id, len(experiment_id), experiment_id),
        )
        exact = [r for r in rows if r[0] == experiment_id]
        if exact or len(rows) == 1:
            return _entry((exact or rows)[0])
        if not rows:
            raise KeyError(f"no experiment {experiment_id!r} in the log {self.where}")
        raise KeyError(f"{experiment_id!r} begins several experiments: {[r[0] for r in rows]}")

    def rows(self, experiment_id: str) -> list[tuple[str | None, list[dict[str, Any]]]]:
        """``(session id, run records)`` of each row of an experiment, in order."""
        found = self.store.db.run(
            f"read the runs of experiment {experiment_id} from",
            "SELECT session_id, runs FROM agentnb_experiment_runs WHERE experiment_id = ? "
            "ORDER BY position",
            (experiment_id,),
        )
        with self.store.db.guard(f"read the runs of experiment {experiment_id} from"):
            return [(sid, json.loads(runs)) for sid, runs in found]

    def session(self, session_id: str) -> Session:
        """A run's session, as the store keeps it (on a store of its own in memory: reading
        an experiment never writes to the log)."""
        _, messages = self.store.read(session_id)
        return Session(messages, id=session_id)

    def close(self) -> None:
        self.store.close()

    def view(self) -> Any:
        """The live view: every experiment, filtered, any two side by side
        (:class:`agentnb.widgets.ExperimentsView`); evaluating the log in a cell shows it."""
        from ... import display

        return display.view(self)

    def __repr__(self) -> str:
        return f"<ExperimentLog {self.where}>"

    def static_html(self) -> str:
        """The listing (``an.evals.experiments(log)``) as an escaped table."""
        from .listing import frame

        table = frame(self.entries()).to_html(index=False, na_rep="")  # pandas escapes cells
        return f"<div><b>experiment log</b> {escape(self.where)}{table}</div>"


def _entry(row: tuple[Any, ...]) -> dict[str, Any]:
    experiment_id, created, kind, source, note, body = row
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise StoreError(f"experiment {experiment_id}'s record is not JSON ({exc})") from None
    return {
        "id": experiment_id,
        "created": float(created),
        "kind": kind,
        "source": source,
        "note": note,
        "body": data,
    }
