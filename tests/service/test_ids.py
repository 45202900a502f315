"""One trace per task, on every backend: the task's ids enter the run, never patched after.

``info.trace_id == rt.result(id).trace_id == session.runs[-1].trace_id == {e.trace_id for e in
rt.get_trace(id)}`` for a plain task, a retried one and a recovered one, in process and on DBOS.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.models import FunctionModel
from agentnb.service import DBOS, Retry
from tests.helpers import eventually


def _agent(failures: int = 0) -> an.Agent:
    """Looks a train up, then answers; the first ``failures`` model calls fail (retried)."""
    calls = [0]

    @an.tool
    def lookup(city: str) -> dict[str, str]:
        """Trains to a city."""
        return {"city": city, "train": "G1"}

    def reply(request: Any) -> dict[str, Any]:
        calls[0] += 1
        if calls[0] <= failures:
            raise an.ModelCallFailed("upstream 503")
        last = request.messages[-1]
        if last["role"] == "user":
            args = json.dumps({"city": last["content"]})
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": args},
                    }
                ],
            }
        return {"role": "assistant", "content": "G1"}

    return an.Agent(tools=[lookup], model=FunctionModel(reply))


@pytest.fixture(params=["inprocess", "dbos"])
async def make_runtime(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    made: list[an.Runtime] = []

    def make(agent: an.Agent, **options: Any) -> an.Runtime:
        store = an.SQLiteStore(tmp_path / "app.db")
        if request.param == "dbos":
            options["backend"] = DBOS(f"sqlite:///{tmp_path / 'dbos.db'}", polling=0.05)
        rt = an.Runtime(agent, store=store, **options)
        made.append(rt)
        return rt

    yield make
    for rt in made:
        await rt.close()


def _one_trace(rt: an.Runtime, task_id: str) -> str:
    info = rt.status(task_id)
    trace = rt.get_trace(task_id)
    session = rt.session(info.session_id)
    assert trace.events
    assert {e.trace_id for e in trace} == {info.trace_id}
    assert {e.task_id for e in trace} == {task_id}
    seqs = [e.seq for e in trace]  # monotonic per session, across attempts and processes
    assert seqs == sorted(set(seqs)), seqs
    assert rt.result(task_id).trace_id == info.trace_id
    mine = [r for r in session.runs if r.task_id == task_id]
    assert mine and mine[-1].trace_id == info.trace_id
    if session.runs[-1].task_id == task_id:  # the session's last task
        assert session.runs[-1].trace_id == info.trace_id
    return info.trace_id


async def test_a_task_is_one_trace(make_runtime: Any) -> None:
    rt = make_runtime(_agent())
    first = await rt.submit("s", "北京")
    second = await rt.submit("s", "上海")
    for task_id in (first, second):
        assert (await rt.wait(task_id, timeout=60)).status == "done"
    assert _one_trace(rt, first) != _one_trace(rt, second)


async def test_every_attempt_of_a_retried_task_is_in_its_trace(make_runtime: Any) -> None:
    rt = make_runtime(_agent(failures=1), retry=Retry(attempts=3, backoff=0.01))
    task_id = await rt.submit("s", "北京")
    info = await rt.wait(task_id, timeout=60)
    assert (info.status, info.attempt) == ("done", 2)
    trace_id = _one_trace(rt, task_id)
    runs = [r for r in rt.session("s").runs if r.task_id == task_id]
    assert len(runs) == 2 and {r.trace_id for r in runs} == {trace_id}
    assert len({e.run_id for e in rt.get_trace(task_id)}) == 2


async def test_a_recovered_task_is_one_trace(tmp_path: Path) -> None:
    """A crash left a lookup round in flight; recovery finishes it under the task's ids."""
    store = an.SQLiteStore(tmp_path / "app.db")
    rt = an.Runtime(_agent(), store=store)
    session = rt.session("s")
    session.append({"role": "user", "content": "北京"})
    assistant = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        ],
    }
    from agentnb.service.tasks import TaskState

    task = TaskState("t-0000000000000001abcdef", "s", "北京")
    rt.log.put(task)
    rt.log.start_len(task.id, 0)
    rt.log.begin_call(task.id, "s", session.version, "c1", "lookup", assistant)
    assert await rt.recover() == [task.id]
    assert (await rt.wait(task.id, timeout=10)).status == "done"
    trace_id = _one_trace(rt, task.id)  # minted by its first run, which recovery made
    assert task.trace_id == "" and len(trace_id) == 32  # (a task that never ran has none)
    assert rt.status(task.id).runs[0].trace_id == trace_id


async def test_the_same_task_costs_the_same_tokens_on_both_backends(tmp_path: Path) -> None:
    infos = []
    for name in ("inprocess", "dbos"):
        folder = tmp_path / name
        folder.mkdir()
        backend = DBOS(f"sqlite:///{folder / 'dbos.db'}", polling=0.05) if name == "dbos" else None
        rt = an.Runtime(_agent(), store=an.SQLiteStore(folder / "app.db"), backend=backend)
        infos.append(await rt.wait(await rt.submit("s", "北京"), timeout=60))
        result = rt.result(infos[-1].id)
        assert infos[-1].tokens == result.usage.total_tokens > 0
        await rt.close()
    here, there = infos
    assert (here.tokens, here.iteration, here.output) == (
        there.tokens,
        there.iteration,
        there.output,
    )


DOOMED_WORKER = """
import asyncio, sys
import agentnb as an, crash_agent
from agentnb.service import DBOS
async def main():
    backend = DBOS(sys.argv[2], executor_id="solo", polling=0.05)
    rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(sys.argv[1]), backend=backend)
    print(await rt.submit("trip", "task-1"), flush=True)
    await asyncio.sleep(60)  # killed long before
asyncio.run(main())
"""


async def test_a_task_recovered_by_dbos_is_one_trace(tmp_path: Path) -> None:
    """A DBOS worker is killed mid-booking; the worker started again under its executor id
    resumes the task: the recovery round is a run with the task's ids."""
    import os
    import signal
    import subprocess
    import sys

    from tests.service import crash_agent

    here = Path(crash_agent.__file__).parent
    effects, db, dbos_db = tmp_path / "effects.txt", tmp_path / "app.db", tmp_path / "dbos.db"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(here), AGENTNB_EFFECTS=str(effects), AGENTNB_TOOL_SECONDS="30")
    proc = subprocess.Popen(
        [sys.executable, "-c", DOOMED_WORKER, str(db), f"sqlite:///{dbos_db}"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    task_id = proc.stdout.readline().strip()

    def booking() -> bool:
        assert proc.poll() is None, "the worker died before the booking"
        return effects.exists() and "effect" in effects.read_text()

    await eventually(booking, 60, what="mid-booking")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    os.environ["AGENTNB_EFFECTS"] = str(effects)
    try:
        backend = DBOS(f"sqlite:///{dbos_db}", executor_id="solo", polling=0.05)
        rt = an.Runtime(crash_agent.make_agent(), store=an.SQLiteStore(db), backend=backend)
        await backend.start()  # DBOS recovers the workflows of its executor id
        info = await rt.wait(task_id, timeout=60)
    finally:
        del os.environ["AGENTNB_EFFECTS"]
    assert (info.status, info.output) == ("done", "uncertain: task-1")
    assert [a["status"] for a in info.attempts] == ["error", "done"]  # the lost one, marked
    assert "lost" in info.attempts[0]["error"]
    _one_trace(rt, task_id)
    await rt.close()
