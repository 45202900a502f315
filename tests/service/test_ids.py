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
            return {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": args}}
            ]}  # fmt: skip
        return {"role": "assistant", "content": "G1"}

    return an.Agent(tools=[lookup], model=FunctionModel(reply))


@pytest.fixture(params=["inprocess"])  # DBOS: see the next commit
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
    assistant = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    ]}  # fmt: skip
    from agentnb.service.tasks import Task

    task = Task("t-0000000000000001abcdef", "s", "北京")
    rt.log.put(task.info())
    rt.log.start_len(task.id, 0)
    rt.log.begin_call(task.id, "s", session.version, "c1", "lookup", assistant)
    assert await rt.recover() == [task.id]
    assert (await rt.wait(task.id, timeout=10)).status == "done"
    assert _one_trace(rt, task.id) == task.trace_id
