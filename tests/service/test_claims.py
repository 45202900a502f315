"""recover() claims tasks: two processes recovering one store share its tasks out (every side
effect once, 20 of 20), and a task whose worker is alive is never taken (issue 27 H9, M11)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import agentnb as an
from tests.helpers import eventually
from tests.service import crash_agent

HERE = Path(crash_agent.__file__).parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

RECOVER = """
import asyncio, sys
import agentnb as an, crash_agent
async def main():
    rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(sys.argv[1]))
    print("ready", flush=True)
    sys.stdin.readline()  # both processes recover at the same moment
    mine = await rt.recover()
    for task_id in mine:
        await rt.wait(task_id, timeout=60)
    print(" ".join(mine), flush=True)
    await rt.close()
asyncio.run(main())
"""


def _dead_worker_left(db: Path, tasks: int) -> list[str]:
    """A store as a worker killed mid-run leaves it: its row alive (its process is gone),
    its tasks running, claimed by it. (Written with sqlite3, as any release would read it.)"""
    import json
    import socket
    import sqlite3

    an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db))  # the tables
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    with sqlite3.connect(db) as con:
        con.execute(
            "CREATE TABLE IF NOT EXISTS agentnb_workers (id TEXT PRIMARY KEY, host TEXT, "
            "boot TEXT, pid INTEGER, started TEXT, beat REAL, state TEXT, taken_by TEXT)"
        )
        con.execute(  # a pid above Linux's default pid_max: its process is gone
            "INSERT INTO agentnb_workers VALUES ('w-dead', ?, ?, ?, '1', 0, 'alive', NULL)",
            (socket.gethostname(), boot, 2**22 + 17),
        )
        columns = {row[1] for row in con.execute("PRAGMA table_info(agentnb_tasks)")}
        if "owner" not in columns:
            con.execute("ALTER TABLE agentnb_tasks ADD COLUMN owner TEXT")
        ids = []
        for i in range(tasks):
            task_id = f"t-{i:016x}abcdef"
            row = {"id": task_id, "session_id": f"trip-{i}", "text": f"task-{i}",
                   "trace_id": f"{i:032x}", "status": "running", "created": 1.0, "runs": [],
                   "attempt": 0, "iteration": 0, "tokens": 0, "stop_reason": None,
                   "output": None, "error": None, "latency": None, "attempts": []}  # fmt: skip
            con.execute(
                "INSERT INTO agentnb_tasks (id, session_id, body, start_len, owner) "
                "VALUES (?, ?, ?, 0, 'w-dead')",
                (task_id, f"trip-{i}", json.dumps(row)),
            )
            ids.append(task_id)
    return ids


def _effects(path: Path) -> Counter[str]:
    lines = path.read_text().splitlines() if path.exists() else []
    return Counter(line.split()[1] for line in lines if line.startswith("effect "))


@pytest.mark.timeout(600)
def test_two_processes_recovering_the_same_tasks_run_each_side_effect_once(
    tmp_path: Path,
) -> None:
    rounds, tasks = 20, 4
    for n in range(rounds):
        db, effects = tmp_path / f"r{n}.db", tmp_path / f"effects{n}.txt"
        ids = _dead_worker_left(db, tasks)
        env = dict(ENV, PYTHONPATH=str(HERE), AGENTNB_EFFECTS=str(effects))
        env["AGENTNB_TOOL_SECONDS"] = "0.05"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", RECOVER, str(db)],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        taken = [proc.communicate(timeout=120)[0].split() for proc in procs]
        assert all(proc.returncode == 0 for proc in procs)
        assert sorted(taken[0] + taken[1]) == ids, taken  # each task taken once, all taken
        bookings = _effects(effects)
        assert len(bookings) == tasks and set(bookings.values()) == {1}, (n, bookings)
        later = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db))
        assert [later.status(t).output for t in ids] == [f"booked: task-{i}" for i in range(4)]


SLOW = """
import asyncio, sys
import agentnb as an, crash_agent
async def main():
    rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(sys.argv[1]))
    task_id = await rt.submit("trip", "task-slow")
    print(task_id, flush=True)
    info = await rt.wait(task_id, timeout=120)
    print(info.status, info.output, flush=True)
    await rt.close()
asyncio.run(main())
"""


async def test_recover_leaves_a_task_whose_worker_is_alive(tmp_path: Path) -> None:
    db, effects = tmp_path / "app.db", tmp_path / "effects.txt"
    env = dict(ENV, PYTHONPATH=str(HERE), AGENTNB_EFFECTS=str(effects), AGENTNB_TOOL_SECONDS="3")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW, str(db)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    task_id = proc.stdout.readline().strip()

    def booking() -> bool:  # mid-booking, alive
        assert proc.poll() is None, "the worker died before the booking"
        return bool(_effects(effects))

    await eventually(booking, 60, what="mid-booking")
    rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db))
    assert await rt.recover() == []  # its worker is alive: not taken
    assert rt.status(task_id).status == "running"
    out = await asyncio.to_thread(proc.communicate, timeout=120)
    assert out[0].split()[:2] == ["done", "booked:"], out
    assert list(_effects(effects).values()) == [1]
    assert rt.status(task_id).output == "booked: task-slow"
    await rt.close()
