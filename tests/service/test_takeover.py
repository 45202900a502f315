"""The user's scenario (issue 29): two workers started with the README's command, 100 tasks
that pay with an idempotency key, a third worker started mid-way, then one worker SIGKILLed
and never restarted. Every task ends exactly once; the dead worker's tasks are taken over
within the bound; nothing is answered uncertain; nothing is charged twice; traces list every
attempt, the lost ones marked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.service import DBOS
from agentnb.service.sqllog import SQLTaskLog
from agentnb.storage.postgres import PostgresStore
from tests.helpers import eventually
from tests.service import payments
from tests.service import pgcluster as pg

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
LEASE, HEARTBEAT = 5.0, 1.0


logs: list[Any] = []  # the workers' log files, closed when the test ends


def _worker(dbos_url: str, store_url: str, env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    """``python -m agentnb worker`` exactly as the README writes it (no executor id)."""
    agent = "tests.service.payments:make_agent"
    cmd = [sys.executable, "-m", "agentnb", "worker", "--agent", agent, "--backend", dbos_url]
    out = open(log, "w")  # noqa: SIM115 - the process writes to it until it ends
    logs.append(out)
    cmd += ["--store", store_url, "--concurrency", "4"]
    return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)


def _ready(log: Path) -> str | None:
    text = log.read_text() if log.exists() else ""
    return text.split()[2] if "ready" in text else None


@pytest.mark.timeout(300)
async def test_a_third_worker_and_a_killed_one(
    pg_admin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_url = pg.create_database(pg_admin, "takeover_app")
    dbos_url = pg.create_database(pg_admin, "takeover_dbos")
    effects, ledger = tmp_path / "effects.txt", tmp_path / "ledger.jsonl"
    effects.touch()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{HERE}", AGENTNB_EFFECTS=str(effects))
    env.update(AGENTNB_LEDGER=str(ledger), AGENTNB_TOOL_SECONDS="0.3")
    monkeypatch.setenv("AGENTNB_LEDGER", str(ledger))
    procs = [_worker(dbos_url, store_url, env, tmp_path / f"w{i}.log") for i in range(2)]
    store = PostgresStore(store_url)
    try:
        await eventually(
            lambda: all(_ready(tmp_path / f"w{i}.log") for i in range(2)), 60, what="start"
        )
        ids = [_ready(tmp_path / f"w{i}.log") for i in range(2)]
        assert len(set(ids)) == 2, ids  # each worker its own id, with no --executor-id
        rt = an.Runtime(payments.make_agent(), store=store, backend=DBOS(dbos_url, workers=False))
        tasks = [await rt.submit(f"user-{n % 30}", f"task-{n}") for n in range(100)]

        def done() -> int:
            return rt.counts()["done"]

        await eventually(lambda: done() >= 20, 120, what="20 tasks done")
        procs.append(_worker(dbos_url, store_url, env, tmp_path / "w2.log"))
        await eventually(lambda: _ready(tmp_path / "w2.log"), 60, what="the third worker started")
        await eventually(lambda: done() >= 50, 120, what="50 tasks done")
        lost = [a for i in rt.list() for a in i.attempts if "lost" in (a["error"] or "")]
        assert lost == []  # the third worker took no live worker's task
        victim = procs[0]
        pid = victim.pid

        def paying() -> list[str]:
            lines = effects.read_text().splitlines()
            return [x for x in lines if x.startswith("effect ") and x.endswith(f" {pid}")]

        before = len(paying())
        await eventually(lambda: len(paying()) > before, 30, what="the victim paying")
        os.kill(pid, signal.SIGKILL)  # mid-payment (charged, not answered), never restarted
        killed_at = time.monotonic()
        victim.wait()
        log = SQLTaskLog(store.database())
        workers = log.workers

        def taken() -> bool:
            return any(r.id == ids[0] and r.state == "dead" for r in workers.rows())

        await eventually(taken, 30, what="the dead worker taken over")
        takeover = time.monotonic() - killed_at
        infos = [await rt.wait(t, timeout=120) for t in tasks]
        elapsed = time.monotonic() - killed_at
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
        for handle in logs:
            handle.close()
    # every task ended once, answered, and charged once
    assert [i.status for i in infos] == ["done"] * 100
    assert [i.output for i in infos] == [f"paid: task-{n}" for n in range(100)]
    charges = Counter(row["key"] for row in payments.ledger() if row["kind"] == "charge")
    assert len(charges) == 100 and set(charges.values()) == {1}, charges.most_common(3)
    replays = sum(1 for row in payments.ledger() if row["kind"] == "replay")
    uncertain = 0
    for sid in {i.session_id for i in infos}:
        for m in store.load(sid).to_openai():
            if m["role"] == "tool" and json.loads(m["content"]).get("kind") == "uncertain":
                uncertain += 1
    assert uncertain == 0  # with keys, an interrupted payment runs again and is replayed
    # within the takeover bound: the lease, or at once on this machine (its pid is gone)
    assert takeover <= LEASE + 2 * HEARTBEAT, takeover
    # traces list every attempt; the ones the kill cut short are marked lost
    lost_tasks = 0
    for info in infos:
        runs = {e.run_id for e in rt.get_trace(info.id)}
        assert {a["run_id"] for a in info.attempts} <= runs | {None}, info
        lost = [a for a in info.attempts if a["lost"]]
        assert all("lost" in a["error"] for a in lost)
        lost_tasks += bool(lost)
        assert info.attempts[-1]["status"] == "done"
    assert 1 <= lost_tasks <= 4  # the killed worker ran at most 4 tasks at once
    assert replays >= 1  # the payment it was making ran again with its key: replayed
    print(
        f"\n100 tasks over 3 workers, one killed: taken over after {takeover:.1f} s, all done "
        f"{elapsed:.1f} s after the kill; {lost_tasks} tasks resumed, {replays} payments "
        f"replayed by key, 0 charged twice, 0 uncertain"
    )
    await rt.close()
    store.close()
