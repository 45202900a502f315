"""Workers and their leases, one rule at a time (SQLite; the takeover test runs Postgres)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import agentnb as an
from agentnb.service.lease import Membership
from agentnb.service.sqllog import SQLTaskLog
from agentnb.service.workers import HOST, Workers
from tests.helpers import eventually_sync


def _log(tmp_path: Path) -> SQLTaskLog:
    return SQLTaskLog(an.SQLiteStore(tmp_path / "app.db").database())


def _elsewhere(table: Workers, worker_id: str, beat_age: float) -> None:
    """A worker on another machine whose last beat was ``beat_age`` seconds ago."""
    table.db.run(
        "fake a worker",
        f"INSERT INTO agentnb_workers VALUES (?, 'other-host', 'other-boot', 1, '1', "
        f"{table.now} - ?, 'alive', NULL)",
        (worker_id, beat_age),
    )


def test_every_worker_gets_its_own_id_and_a_live_id_is_refused(tmp_path: Path) -> None:
    log = _log(tmp_path)
    a, b = Membership(log.workers), Membership(log.workers)
    a.join()
    b.join()
    assert a.id != b.id and a.id.startswith(HOST)
    with pytest.raises(an.ConfigurationError, match="in use by a live worker"):
        Membership(log.workers, a.id).join()
    a.leave()
    again = Membership(log.workers, a.id)  # a restart under its old id, once it stopped
    again.join()
    for m in (b, again):
        m.leave()


def test_a_worker_whose_lease_lapsed_is_taken_by_exactly_one(tmp_path: Path) -> None:
    log = _log(tmp_path)
    _elsewhere(log.workers, "fresh", 0.5)
    _elsewhere(log.workers, "lapsed", 30)
    survivors = [Membership(log.workers, lease=5.0) for _ in range(2)]
    for m in survivors:
        m.join()
    assert [r.id for r in survivors[0].lost_workers()] == ["lapsed"]  # not the fresh one
    (row,) = survivors[0].lost_workers()
    won = [m.take(row) for m in survivors]
    assert won == [True, False]  # one taker wins, the other finds it taken
    (dead,) = log.workers.rows("lapsed")
    assert (dead.state, dead.taken_by) == ("dead", survivors[0].id)
    for m in survivors:
        m.leave()


def test_a_worker_declared_dead_stops_and_journals_no_side_effect(tmp_path: Path) -> None:
    log = _log(tmp_path)
    lost = threading.Event()
    member = Membership(log.workers, heartbeat=0.05, lease=1.0, on_lost=lambda why: lost.set())
    member.join()
    log.worker = member.id
    log.begin_call("t-1", "s", 1, "c1", "pay", {})  # alive: journalled
    taker = Membership(log.workers)
    taker.join()
    assert log.workers.take(member.id, taker.id, 1.0, force=True)  # say its lease lapsed
    with pytest.raises(an.StoreError, match="declared dead"):
        log.begin_call("t-1", "s", 1, "c2", "pay", {})  # the fence: this call never runs
    assert [r["call_id"] for r in log.open_calls("t-1")] == ["c1"]
    assert lost.wait(5) and member.lost is not None and "declared dead" in member.lost
    taker.leave()


def test_a_worker_dropped_without_close_stops_beating(tmp_path: Path) -> None:
    log = _log(tmp_path)

    class Owner:
        pass

    owner = Owner()
    member = Membership(log.workers, heartbeat=0.05, lease=1.0, owner=owner)
    member.join()
    del owner
    eventually_sync(lambda: log.workers.rows(member.id)[0].state == "stopped", 5)


def test_a_worker_given_an_agent_it_cannot_load_says_so_in_one_line(tmp_path: Path) -> None:
    """A bad --agent answered with a full traceback (exit 1), where eval and optimize answer
    the same mistake in one line with exit 2 (L4)."""
    import subprocess
    import sys

    base = [sys.executable, "-m", "agentnb", "worker", "--backend",
            f"sqlite:///{tmp_path / 'dbos.db'}", "--store", str(tmp_path / "app.db")]  # fmt: skip
    for spec, why in (
        ("nowhere_at_all:make", "--agent 'nowhere_at_all:make' cannot be loaded: No module"),
        ("agentnb:no_such_factory", "--agent 'agentnb:no_such_factory' cannot be loaded"),
        ("nocolon", "--agent must look like module:factory, got 'nocolon'"),
    ):
        done = subprocess.run([*base, "--agent", spec], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"agentnb worker: {why}"), done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
