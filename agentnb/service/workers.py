"""Workers: who runs a store's tasks, and whether each is alive.

Every process that runs tasks of a durable runtime (a ``python -m agentnb worker``, or an
in-process runtime on a SQLite or Postgres store) is a *worker* with a unique id (host, pid,
start time, unless one is given: ``--executor-id``, kept over restarts) and a row in
``agentnb_workers``, renewed every heartbeat and stamped with the database's clock (so
machines whose clocks differ still agree on a lease). A worker is *lost* when its lease
lapsed, or at once when it ran on this machine and its process is gone
(:func:`process_gone`). How a worker keeps its lease and takes over lost ones:
:mod:`.lease`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..storage import SQLDatabase, Statements

__all__ = ["BOOT", "HOST", "WorkerRow", "Workers", "new_worker_id", "process_gone", "started_at"]

logger = logging.getLogger("agentnb.service")


def _boot() -> str:
    """This machine's boot id (a pid means something only on the same host and boot)."""
    with contextlib.suppress(OSError):
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    return ""


HOST, BOOT = socket.gethostname(), _boot()


def started_at(pid: int) -> str:
    """When process ``pid`` started (clock ticks after boot; "" where /proc is not)."""
    with contextlib.suppress(OSError, IndexError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rpartition(")")[2].split()[19]
    return ""


def new_worker_id() -> str:
    """``host-pid-start``: unique among the workers of every machine and restart."""
    return f"{HOST}-{os.getpid()}-{int(time.time() * 1000):x}{os.urandom(2).hex()}"


@dataclass(frozen=True, slots=True)
class WorkerRow:
    id: str
    host: str
    boot: str
    pid: int
    started: str
    beat: float  # the database's clock at the last beat
    state: str  # alive | stopped | dead
    taken_by: str | None
    age: float  # seconds since the last beat, by the database's clock


def process_gone(row: WorkerRow) -> bool:
    """The worker ran here and its process is no more (or is another process now)."""
    if not row.boot or row.boot != BOOT or row.host != HOST:
        return False
    try:
        os.kill(row.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{row.pid}/stat").read_text()
        if stat.rpartition(")")[2].split()[0] == "Z":  # a zombie: dead, not yet reaped
            return True
    return bool(row.started) and started_at(row.pid) != row.started  # the pid was reused


class Workers:
    """The ``agentnb_workers`` table of a store: one row per worker, stamped with the
    database's clock (so machines whose clocks differ still agree on a lease)."""

    def __init__(self, db: SQLDatabase) -> None:
        self.db = db
        self.now = db.now

        def create(run: Statements) -> None:
            if db.dialect == "postgres":  # CREATE ... IF NOT EXISTS races between processes
                run("SELECT pg_advisory_xact_lock(7242002)")
            run(
                "CREATE TABLE IF NOT EXISTS agentnb_workers (id TEXT PRIMARY KEY, "
                "host TEXT NOT NULL, boot TEXT NOT NULL, pid INTEGER NOT NULL, "
                "started TEXT NOT NULL, beat DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, "
                "taken_by TEXT)"
            )

        db.write("set up the workers table in", create)

    def join(
        self, worker_id: str, pid: int, started: str, lease: float, *, force: bool = False
    ) -> bool:
        """Register ``worker_id`` alive; False when a live worker holds the id."""
        now = self.now
        rows = self.db.run(
            f"register worker {worker_id} in",
            "INSERT INTO agentnb_workers (id, host, boot, pid, started, beat, state) "
            f"VALUES (?, ?, ?, ?, ?, {now}, 'alive') ON CONFLICT (id) DO UPDATE SET "
            "host = excluded.host, boot = excluded.boot, pid = excluded.pid, "
            "started = excluded.started, beat = excluded.beat, state = 'alive', taken_by = NULL "
            f"WHERE agentnb_workers.state <> 'alive' OR agentnb_workers.beat < {now} - ? "
            "OR ? RETURNING id",
            (worker_id, HOST, BOOT, pid, started, lease, force),
        )
        return bool(rows)

    def beat(self, worker_id: str) -> bool:
        """Renew the lease; False when the worker was declared dead meanwhile."""
        rows = self.db.run(
            f"renew the lease of worker {worker_id} in",
            f"UPDATE agentnb_workers SET beat = {self.now} WHERE id = ? AND state = 'alive' "
            "RETURNING id",
            (worker_id,),
        )
        return bool(rows)

    def leave(self, worker_id: str) -> None:
        self.db.run(
            f"mark worker {worker_id} stopped in",
            f"UPDATE agentnb_workers SET state = 'stopped', beat = {self.now} "
            "WHERE id = ? AND state = 'alive'",
            (worker_id,),
        )

    def rows(self, worker_id: str | None = None) -> list[WorkerRow]:
        where, args = ("WHERE id = ?", (worker_id,)) if worker_id is not None else ("", ())
        rows = self.db.run(
            "read the workers of",
            "SELECT id, host, boot, pid, started, beat, state, taken_by, "
            f"{self.now} - beat FROM agentnb_workers {where} ORDER BY id",
            args,
        )
        return [
            WorkerRow(i, h, b, int(p), s, float(t), st, by, float(a))
            for i, h, b, p, s, t, st, by, a in rows
        ]

    def take(self, worker_id: str, taker: str, lease: float, *, force: bool = False) -> bool:
        """Declare ``worker_id`` dead, taken by ``taker``: True for the one taker that won (a
        live worker past its lease, or gone, or one that stopped)."""
        rows = self.db.run(
            f"take over worker {worker_id} in",
            "UPDATE agentnb_workers SET state = 'dead', taken_by = ? WHERE id = ? AND "
            f"(state = 'stopped' OR (state = 'alive' AND (beat < {self.now} - ? OR ?))) "
            "RETURNING id",
            (taker, worker_id, lease, force),
        )
        return bool(rows)

    def alive(self, worker_id: str) -> bool:
        rows = self.db.run(
            f"read worker {worker_id} in",
            "SELECT state FROM agentnb_workers WHERE id = ?",
            (worker_id,),
        )
        return bool(rows) and rows[0][0] == "alive"
