"""Approvals on the service, on both backends: approve, deny, expired, wrong digest, durable
across a restart, and a crash between approval and effect (answered uncertain, never rerun)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.errors import ApprovalError
from agentnb.service import DBOS
from tests.helpers import eventually
from tests.service import approval_agent

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
BACKENDS = ["inprocess", "dbos"]


def _runtime(kind: str, folder: Path, **options: Any) -> an.Runtime:
    backend = DBOS(f"sqlite:///{folder / 'dbos.db'}", polling=0.05) if kind == "dbos" else None
    store = an.SQLiteStore(folder / "app.db")
    return an.Runtime(approval_agent.make_agent(), store=store, backend=backend, **options)


@pytest.fixture
async def made(tmp_path: Path) -> AsyncIterator[list[an.Runtime]]:
    runtimes: list[an.Runtime] = []
    yield runtimes
    for rt in runtimes:
        await rt.close()


async def _waiting(rt: an.Runtime, task_id: str, timeout: float = 30) -> Any:
    await eventually(lambda: rt.status(task_id).status == "awaiting_approval", timeout)
    (pending,) = rt.approvals(task_id)
    return pending


def _tool_results(rt: an.Runtime, session_id: str) -> list[Any]:
    wire = rt.session(session_id).to_openai()
    return [m["content"] for m in wire if m["role"] == "tool"]


@pytest.mark.parametrize("kind", BACKENDS)
async def test_approve(kind: str, tmp_path: Path, made: list[an.Runtime]) -> None:
    rt = _runtime(kind, tmp_path)
    made.append(rt)
    task_id = await rt.submit("s", "30")
    pending = await _waiting(rt, task_id)
    assert (pending.call_id, pending.tool, pending.arguments) == ("p1", "pay", '{"amount": 30}')
    assert rt.session("s").open_calls == {"p1": "pay"}  # it waits, open, in the store
    with pytest.raises(ApprovalError, match="other arguments"):
        await rt.approve(task_id, "p1", digest="0" * 64)
    await rt.approve(task_id, "p1", digest=pending.digest)
    info = await rt.wait(task_id, timeout=30)
    assert (info.status, info.output) == ("done", "paid 30")
    assert _tool_results(rt, "s") == ["paid 30"] and rt.approvals() == []
    with pytest.raises(ApprovalError, match="awaits approval"):  # decided: at most once
        await rt.approve(task_id, "p1", digest=pending.digest)
    stops = [e.reason for e in rt.get_trace(task_id).of_type(an.events.RunStopped)]
    assert stops == ["awaiting_approval", "final_answer"]  # two runs: asked, then resumed


@pytest.mark.parametrize("kind", BACKENDS)
async def test_deny(kind: str, tmp_path: Path, made: list[an.Runtime]) -> None:
    rt = _runtime(kind, tmp_path)
    made.append(rt)
    task_id = await rt.submit("s", "3000")
    await _waiting(rt, task_id)
    await rt.deny(task_id, "p1", "too much: ask me first")
    info = await rt.wait(task_id, timeout=30)
    assert (info.status, info.output) == ("done", "denied: too much: ask me first")
    (result,) = _tool_results(rt, "s")
    assert json.loads(result)["kind"] == "denied"


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_cancelled_tasks_call_is_no_longer_offered(
    kind: str, tmp_path: Path, made: list[an.Runtime]
) -> None:
    """It stayed in approvals() and approve() returned as if it had worked: nothing ran
    (the hostile test's M1)."""
    rt = _runtime(kind, tmp_path)
    made.append(rt)
    task_id = await rt.submit("s", "30")
    pending = await _waiting(rt, task_id)
    assert rt.cancel(task_id)
    await eventually(lambda: rt.status(task_id).status == "cancelled", 30)
    assert rt.approvals() == [] and rt.approvals(task_id) == []
    with pytest.raises(ApprovalError, match="is cancelled: its calls will not run"):
        await rt.approve(task_id, "p1", digest=pending.digest)
    assert "paid" not in " ".join(_tool_results(rt, "s"))


@pytest.mark.parametrize("kind", BACKENDS)
async def test_an_unanswered_request_expires(
    kind: str, tmp_path: Path, made: list[an.Runtime]
) -> None:
    rt = _runtime(kind, tmp_path, approval_timeout=1.0)
    made.append(rt)
    task_id = await rt.submit("s", "30")
    pending = await _waiting(rt, task_id)
    assert pending.expires is not None
    info = await rt.wait(task_id, timeout=30)  # nobody answers
    assert info.status == "done" and info.output is not None and "expired" in info.output
    with pytest.raises(ApprovalError):
        await rt.approve(task_id, "p1", digest=pending.digest)


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_wait_outlives_the_runtime(
    kind: str, tmp_path: Path, made: list[an.Runtime]
) -> None:
    first = _runtime(kind, tmp_path)
    task_id = await first.submit("s", "30")
    pending = await _waiting(first, task_id)
    await first.close()
    later = _runtime(kind, tmp_path)  # a new process, as far as the store can tell
    made.append(later)
    assert later.status(task_id).status == "awaiting_approval"
    await later.recover()
    if kind == "dbos":
        await later.backend.start()  # its worker takes the stopped one's workflow over
    await later.approve(task_id, "p1", digest=pending.digest)
    info = await later.wait(task_id, timeout=60)
    assert (info.status, info.output) == ("done", "paid 30")


DOOMED = """
import asyncio, sys
import agentnb as an
from agentnb.service import DBOS
from tests.service import approval_agent
async def main():
    folder, kind = sys.argv[1], sys.argv[2]
    backend = DBOS(f"sqlite:///{folder}/dbos.db", polling=0.05) if kind == "dbos" else None
    rt = an.Runtime(approval_agent.make_agent(), store=an.SQLiteStore(f"{folder}/app.db"),
                    backend=backend)
    print(await rt.submit("s", "30"), flush=True)
    await asyncio.sleep(120)  # killed long before
asyncio.run(main())
"""


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_crash_between_approval_and_effect(
    kind: str, tmp_path: Path, made: list[an.Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    effects = tmp_path / "effects.txt"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), AGENTNB_EFFECTS=str(effects), AGENTNB_TOOL_SECONDS="60")
    proc = subprocess.Popen(
        [sys.executable, "-c", DOOMED, str(tmp_path), kind],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    task_id = proc.stdout.readline().strip()
    watcher = _runtime(kind, tmp_path)  # approves from another process's view of the store
    if kind == "dbos":
        watcher.backend.workers = False  # type: ignore[attr-defined]
    pending = await _waiting(watcher, task_id)
    await watcher.approve(task_id, "p1", digest=pending.digest)

    def paying() -> bool:  # slowly
        assert proc.poll() is None, "the worker died before paying"
        return effects.exists() and "effect" in effects.read_text()

    await eventually(paying, 60, what="paying")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    await watcher.close()
    monkeypatch.setenv("AGENTNB_EFFECTS", str(effects))
    later = _runtime(kind, tmp_path)
    made.append(later)
    await later.recover()
    if kind == "dbos":
        await later.backend.start()  # takes the dead worker's workflow over
    info = await later.wait(task_id, timeout=60)
    assert info.status == "done" and info.output is not None
    assert info.output.startswith("uncertain:")  # never run again on its own
    (result,) = _tool_results(later, "s")
    answer = json.loads(result)
    assert answer["kind"] == "uncertain" and answer["idempotency_key"] == pending.key
    assert [line.split()[0] for line in effects.read_text().splitlines()] == ["effect"]


def test_an_approve_and_a_deny_at_once_on_postgres_one_wins_the_other_is_told(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both succeeded: the payment ran and the person who denied was told nothing (M4). A
    decision is taken only if it changed the row (compare-and-set); the other is refused,
    naming the decision that came first."""
    import threading

    from agentnb.runtime.guard import ApprovalRequest
    from agentnb.service.approvals import SQLApprovals
    from agentnb.storage import database
    from agentnb.storage.postgres import PostgresStore

    request = ApprovalRequest("p1", "pay", '{"amount": 30}', "d" * 64, "key-p1")
    first, second = (SQLApprovals(PostgresStore(pg_url).database()) for _ in range(2))
    assert first.ask("t1", "s", request, None)[0] == "pending"
    both_read = threading.Barrier(2, timeout=10)
    real = database.Statements.__call__

    def racing(self, sql, args=()):  # both read the row as pending before either writes
        rows = real(self, sql, args)
        if "verdict IS NULL ORDER BY requested DESC" in sql:
            both_read.wait()
        return rows

    monkeypatch.setattr(database.Statements, "__call__", racing)
    outcomes: dict[str, str] = {}

    def decide(approvals: SQLApprovals, verdict: str) -> None:
        try:
            approvals.decide("t1", "p1", "d" * 64, verdict, "no" if verdict == "denied" else "")
            outcomes[verdict] = "taken"
        except ApprovalError as exc:
            outcomes[verdict] = str(exc)

    threads = [
        threading.Thread(target=decide, args=(first, "approved")),
        threading.Thread(target=decide, args=(second, "denied")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    taken = [v for v, o in outcomes.items() if o == "taken"]
    assert len(taken) == 1, outcomes
    (lost,) = [o for o in outcomes.values() if o != "taken"]
    assert f"it was already {taken[0]}" in lost and "this decision was not taken" in lost
    assert first.pending() == [] == second.pending()
