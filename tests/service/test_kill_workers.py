"""kill -9, 50 times at random moments, with two workers over the distributed backend.

Two worker processes (DBOS on Postgres, sessions in PostgresStore) run tasks that look up a
train (no side effects) and pay for it (``side_effects=True``) at a fake payment service that
dedupes by idempotency key (``payments.py``). Each worker process runs
``agentnb.service.worker.main`` — what ``python -m agentnb worker`` runs (that command itself
is tested in test_recovery.py) — forked from a parent that imported everything once, so a
killed worker is back at once under the same executor id. Whenever a worker is running tasks,
one is killed with SIGKILL after a random pause. An external file records every tool run.

Twice: with keys (the payment is ``idempotent=True``: after a kill it runs again with its
key and the service replays it) and without (it is answered ``uncertain``, never repeated).
Afterwards: every accepted task ended exactly once; its input and its answer are each in its
session once; nothing was charged twice; without keys every payment interrupted mid-call was
answered ``uncertain``, with keys none was; a read-only call ran again only when the process
that ran it was killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import agentnb as an
from agentnb.service import DBOS
from agentnb.storage.postgres import PostgresStore
from tests.helpers import eventually, eventually_sync
from tests.service import pgcluster as pg

HERE = Path(__file__).parent
KILLS = 50


# A fork server: one process imports everything once, then forks a fresh worker process per
# life, so a killed worker is back at once (its import time is not what is being tested).
# Nothing has started a thread before the fork; each child is a process of its own, killed
# with SIGKILL like any other.
ZYGOTE = """
import json, os, signal, sys
import agentnb.service.durable, agentnb.service.worker as worker, agentnb.storage.postgres
import tests.service.payments, dbos, psycopg, sqlalchemy
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they die
for line in sys.stdin:
    args, log = json.loads(line)
    pid = os.fork()
    if pid == 0:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os._exit(worker.main(args))
    print(pid, flush=True)
"""


class Zygote:
    def __init__(self, effects: Path, logs: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=f"{HERE.parents[1]}{os.pathsep}{HERE}", AGENTNB_EFFECTS=str(effects))
        self.logs = logs
        self.lives = 0
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def spawn(self, args: list[str]) -> tuple[int, Path]:
        self.lives += 1
        out = self.logs / f"worker.{self.lives}.log"
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([args, str(out)]) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline()), out

    def stop(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(10)
        self.proc.stdout.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Worker:
    def __init__(
        self, name: str, agent: str, dbos_url: str, store_url: str, zygote: Zygote
    ) -> None:
        self.name, self.zygote = name, zygote
        self.args = ["--agent", agent, "--backend", dbos_url, "--store", store_url]
        self.args += ["--executor-id", name, "--concurrency", "4", "--polling", "0.05"]
        self.args += ["--max-lost", "50"]  # killed 50 times on purpose: no task is given up
        # A worker starved of CPU on a loaded machine (two cores, several test runs) missed
        # its 5 s lease, was declared dead by the other and exited by design, and the test
        # then failed on it (a kill of a process already gone; or one worker left, never
        # restarted, tasks waiting past 90 s). The kills are what is tested here: a killed
        # worker is seen gone at once on this machine (its pid), whatever the lease.
        self.args += ["--lease", "30"]
        self.killed: list[int] = []
        self.start()

    def start(self) -> None:
        self.pid, self.out = self.zygote.spawn(self.args)

    def ready(self) -> bool:
        return self.out.exists() and "ready" in self.out.read_text()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # it stopped on its own (declared dead)
            os.kill(self.pid, signal.SIGKILL)
        eventually_sync(lambda: not _alive(self.pid), what=f"worker {self.pid} gone")
        self.killed.append(self.pid)

    def restart_if_gone(self) -> None:
        """A worker that stopped on its own (declared dead, it exits) is back at once, as a
        killed one is: its runs may be taken over and re-run, as a killed one's are."""
        if not _alive(self.pid):
            self.killed.append(self.pid)
            self.start()

    def stop(self) -> None:
        if _alive(self.pid):
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while _alive(self.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            if _alive(self.pid):
                self.kill()


#: One note: ``kind call pid``. A worker killed while appending one can leave it torn (a
#: write cut short by SIGKILL), and the next note is appended to its stub on the same line
#: (seen: ``end call_parun call_search_trains_a84a062df8fe 19960``): the whole notes are
#: read wherever they start, the torn one is not (its call did not end).
NOTE = re.compile(r"(run|effect|end) (call_\w+) (\d+)(?=\n|$)")


def _effects(path: Path) -> list[tuple[str, str, int]]:
    return [(m[1], m[2], int(m[3])) for m in NOTE.finditer(path.read_text())]


def _busy(effects: Path, pid: int) -> bool:
    return any(p == pid for _, _, p in _effects(effects))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("keys", [True, False], ids=["with-keys", "without-keys"])
async def test_fifty_kills_two_workers(
    pg_admin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: bool
) -> None:
    store_url = pg.create_database(pg_admin, f"kill_app_{keys}")
    dbos_url = pg.create_database(pg_admin, f"kill_dbos_{keys}")
    effects, ledger = tmp_path / "effects.txt", tmp_path / "ledger.jsonl"
    effects.touch()
    monkeypatch.setenv("AGENTNB_LEDGER", str(ledger))  # the zygote's workers inherit it
    rng = random.Random(int(os.environ.get("AGENTNB_KILL_SEED", time.time())))
    zygote = Zygote(effects, tmp_path)
    agent = f"tests.service.payments:make_agent{'' if keys else '_nokeys'}"
    workers = [Worker(f"w{i}", agent, dbos_url, store_url, zygote) for i in range(2)]
    started = time.monotonic()
    try:
        await eventually(lambda: all(w.ready() for w in workers), 60, what="workers started")
        from tests.service import payments

        store = PostgresStore(store_url)
        made = payments.make_agent() if keys else payments.make_agent_nokeys()
        rt = an.Runtime(made, store=store, backend=DBOS(dbos_url, workers=False))
        accepted: list[str] = []
        n = 0

        async def top_up(target: int) -> None:
            nonlocal n
            open_tasks = sum(1 for i in rt.list() if not i.done)
            for _ in range(max(0, target - open_tasks)):
                accepted.append(await rt.submit(f"user-{n % 40}", f"task-{n}"))
                n += 1

        await top_up(24)
        kills = 0
        while kills < KILLS:
            for w in workers:
                w.restart_if_gone()
            up = await eventually(  # kill mid-task, not mid-start
                lambda: [w for w in workers if w.ready() and _busy(effects, w.pid)],
                30,
                what="a worker busy with a task",
            )
            w = rng.choice(up)
            if os.environ.get("AGENTNB_KILL_DEBUG"):
                print(f"{time.monotonic() - started:6.2f} kill {w.name} ({w.pid})")
            await asyncio.sleep(rng.uniform(0.0, 0.5))
            w.kill()
            kills += 1
            w.start()
            await top_up(24)
        for task_id in accepted:
            await rt.wait(task_id, timeout=90)
        elapsed = time.monotonic() - started
        infos = {i.id: i for i in rt.list()}
        killed = {pid for w in workers for pid in w.killed}
    finally:
        for w in workers:
            w.stop()
        zygote.stop()
    # every accepted task ended, exactly once
    assert set(infos) == set(accepted)
    ends = Counter(infos[t].status for t in accepted)
    assert set(ends) <= {"done", "error", "cancelled"}, ends
    assert ends["done"] == len(accepted), ends
    workflows = rt.backend.client.list_workflows(workflow_ids=accepted, load_input=False)  # type: ignore[attr-defined]
    assert {w.status for w in workflows} == {"SUCCESS"} and len(workflows) == len(accepted)
    runs = _effects(effects)
    started_calls = Counter(call for kind, call, _ in runs if kind == "effect")
    ended_calls = {call for kind, call, _ in runs if kind == "end"}
    from tests.service import payments

    book = payments.ledger()
    charges = Counter(row["key"] for row in book if row["kind"] == "charge")
    replays = sum(1 for row in book if row["kind"] == "replay")
    assert started_calls and charges
    if keys:  # a payment cut short ran again with its key: the service charged it once
        assert set(charges.values()) == {1}, charges.most_common(3)
        assert len(charges) == len(started_calls)  # one charge per call, however often run
    else:  # never run twice for one call: no second charge can happen
        assert max(started_calls.values()) == 1, started_calls.most_common(3)
    uncertain: set[str] = set()
    for sid in {infos[t].session_id for t in accepted}:
        session = store.load(sid)
        assert session.is_valid, session.problems
        wire = session.to_openai()
        users = Counter(m["content"] for m in wire if m["role"] == "user")
        answers = Counter(
            m["content"].split(": ", 1)[1]
            for m in wire
            if m["role"] == "assistant" and not m.get("tool_calls")
        )
        mine = [infos[t].text for t in accepted if infos[t].session_id == sid]
        assert all(users[text] == 1 and answers[text] == 1 for text in mine), (users, answers)
        assert [m["content"] for m in wire if m["role"] == "user"] == mine  # FIFO per session
        for m in wire:
            if m["role"] == "tool" and json.loads(m["content"]).get("kind") == "uncertain":
                uncertain.add(m["tool_call_id"])
    interrupted = {c for c, n in started_calls.items() if c not in ended_calls or n > 1}
    assert interrupted, "50 kills and no call was in flight: the test did not exercise a crash"
    if keys:  # nothing uncertain: each interrupted payment ran again, the service replayed it
        assert not uncertain and replays >= 1
    else:  # every payment interrupted mid-call is reported uncertain
        assert interrupted <= uncertain, interrupted - uncertain
    # a read-only call ran again only where the process that ran it before had been killed
    by_call: dict[str, list[int]] = {}
    for kind, call, pid in runs:
        if kind == "run":
            by_call.setdefault(call, []).append(pid)
    assert all(set(pids[:-1]) <= killed for pids in by_call.values())
    reruns = sum(len(p) - 1 for p in by_call.values())
    duplicates = sum(n - 1 for n in charges.values()) if keys else 0
    print(
        f"\n{'with' if keys else 'without'} keys, {KILLS} kills in {elapsed:.1f} s: "
        f"{len(accepted)} tasks done, {len(started_calls)} payments, {len(interrupted)} "
        f"interrupted, {len(uncertain)} answered uncertain, {replays} replayed by key, "
        f"{duplicates} charged twice, {reruns} read-only calls re-run"
    )
    await rt.close()
    store.close()
