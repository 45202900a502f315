"""an.Runtime in process: the bounded queue, its policies, retries, traces by task id."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.models import FunctionModel
from agentnb.service import QueueFull, Retry
from tests.helpers import eventually


def echo_agent(active: list[int] | None = None, delay: float = 0.001) -> an.Agent:
    """Answers "<text> ok" after ``delay``; counts the model calls in flight in ``active``."""
    active = active if active is not None else [0, 0]

    async def reply(request: Any) -> dict[str, Any]:
        active[0] += 1
        active[1] = max(active[1], active[0])
        try:
            await asyncio.sleep(delay)
        finally:
            active[0] -= 1
        return {"role": "assistant", "content": f"{request.messages[-1]['content']} ok"}

    return an.Agent("echo", model=FunctionModel(reply))


async def test_thousand_tasks_on_two_hundred_sessions() -> None:
    active = [0, 0]
    rt = an.Runtime(echo_agent(active), max_concurrency=8, max_queue=1000)
    ids = {}
    for i in range(1000):
        sid = f"s{i % 200}"
        ids[await rt.submit(sid, f"{sid}:{i}")] = (sid, f"{sid}:{i}")
    infos = await rt.join(timeout=120)
    assert [i.status for i in infos] == ["done"] * 1000
    assert active[1] <= 8 and rt.backend.peak <= 8  # type: ignore[attr-defined]
    assert active[1] == 8  # the limit was reached, not avoided
    for task_id, (sid, text) in ids.items():
        trace = rt.get_trace(task_id)
        assert trace.events and {e.task_id for e in trace} == {task_id}
        assert {e.session_id for e in trace} == {sid}
        assert rt.status(task_id).output == f"{text} ok"
    for n in range(200):
        sid = f"s{n}"
        wire = rt.session(sid).to_openai()
        assert all(m["content"].startswith(f"{sid}:") for m in wire)  # no cross-talk
        users = [m["content"] for m in wire if m["role"] == "user"]
        assert users == [f"{sid}:{i}" for i in range(n, 1000, 200)]  # in submission order
    assert rt.counts()["done"] == 1000 and rt.counts()["queued"] == 0
    await rt.close()


def gated_agent(gate: asyncio.Event, started: list[str]) -> an.Agent:
    async def reply(request: Any) -> dict[str, Any]:
        started.append(request.messages[-1]["content"])
        await gate.wait()
        return {"role": "assistant", "content": "ok"}

    return an.Agent(model=FunctionModel(reply))


async def test_full_queue_rejects_and_loses_nothing_accepted() -> None:
    gate, started = asyncio.Event(), []
    rt = an.Runtime(gated_agent(gate, started), max_concurrency=1, max_queue=5)
    accepted = [await rt.submit("u0", "m0")]
    await eventually(lambda: started == ["m0"])  # the worker took it
    accepted += [await rt.submit(f"u{i}", f"m{i}") for i in range(1, 6)]  # 5 queued
    assert rt.counts()["running"] == 1 and rt.counts()["queued"] == 5
    with pytest.raises(QueueFull, match="max_queue=5") as caught:
        await rt.submit("late", "m6")
    assert caught.value.depth == 5
    gate.set()
    infos = [await rt.wait(t, timeout=10) for t in accepted]
    assert [i.status for i in infos] == ["done"] * 6
    assert started == [f"m{i}" for i in range(6)]
    assert "late" not in [i.session_id for i in rt.list()]
    await rt.close()


async def test_full_queue_makes_the_submitter_wait() -> None:
    gate, started = asyncio.Event(), []
    rt = an.Runtime(gated_agent(gate, started), max_concurrency=1, max_queue=2, on_full="wait")
    await rt.submit("u0", "m0")
    await eventually(lambda: started == ["m0"])
    for i in (1, 2):
        await rt.submit(f"u{i}", f"m{i}")
    waiting = asyncio.ensure_future(rt.submit("u3", "m3"))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # backpressure: the submitter waits for room
    gate.set()
    task_id = await asyncio.wait_for(waiting, 5)
    assert (await rt.wait(task_id, timeout=5)).status == "done"
    await rt.close()


def slow_tool_agent(calls: list[str]) -> an.Agent:
    """Calls a slow lookup, then answers with the user's text."""

    @an.tool
    async def lookup(q: str) -> str:
        """Look something up (slowly)."""
        calls.append(q)
        await asyncio.sleep(0.2)
        return "found"

    def reply(request: Any) -> dict[str, Any]:
        last = request.messages[-1]
        if last["role"] == "user":
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{len(calls)}",
                        "type": "function",
                        "function": {
                            "name": "lookup",
                            "arguments": json.dumps({"q": last["content"]}),
                        },
                    }
                ],
            }
        user = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
        return {"role": "assistant", "content": f"answer to {user}"}

    return an.Agent(tools=[lookup], model=FunctionModel(reply))


async def test_multitask_enqueue_runs_in_order() -> None:
    rt = an.Runtime(slow_tool_agent([]))
    first = await rt.submit("s", "one")
    second = await rt.submit("s", "two")
    await rt.join(timeout=10)
    assert rt.status(first).output == "answer to one" and rt.status(second).done
    session = rt.session("s")
    assert session.is_valid
    assert [m["content"] for m in session.to_openai() if m["role"] == "user"] == ["one", "two"]


async def test_multitask_reject_refuses_a_busy_session() -> None:
    rt = an.Runtime(slow_tool_agent([]), multitask="reject")
    first = await rt.submit("s", "one")
    with pytest.raises(an.SessionBusy, match="multitask='reject'"):
        await rt.submit("s", "two")
    await rt.submit("other", "fine")  # other sessions are not busy
    assert (await rt.wait(first, timeout=5)).status == "done"
    await rt.submit("s", "three")  # free again
    await rt.join(timeout=5)
    assert rt.session("s").is_valid


@pytest.mark.parametrize("policy", ["interrupt", "rollback"])
async def test_multitask_interrupt_and_rollback(policy: str) -> None:
    calls: list[str] = []
    rt = an.Runtime(slow_tool_agent(calls))
    first = await rt.submit("s", "one")
    await eventually(lambda: calls)  # the first task is inside its tool call
    second = await rt.submit("s", "two", multitask=policy)  # type: ignore[arg-type]
    one, two = await rt.wait(first, timeout=5), await rt.wait(second, timeout=5)
    assert (one.status, one.stop_reason) == ("cancelled", "cancelled")
    assert two.status == "done" and two.output == "answer to two"
    session = rt.session("s")
    assert session.is_valid, session.problems
    wire = session.to_openai()
    users = [m["content"] for m in wire if m["role"] == "user"]
    if policy == "interrupt":  # the interrupted call was answered "cancelled"
        assert users == ["one", "two"]
        cancelled = [m for m in wire if m["role"] == "tool" and '"cancelled"' in m["content"]]
        assert len(cancelled) == 1
    else:  # rollback: the first task's messages are gone
        assert users == ["two"] and not any("one" in str(m.get("content")) for m in wire)
    assert an.SQLiteStore
    assert session.store.read("s")[1] == wire


def failing_agent(failures: int, counter: list[int]) -> an.Agent:
    def reply(request: Any) -> dict[str, Any]:
        counter[0] += 1
        if counter[0] <= failures:
            raise an.ModelCallFailed(f"upstream 503 (call {counter[0]})")
        return {"role": "assistant", "content": "finally"}

    return an.Agent(model=FunctionModel(reply))


async def test_a_failed_task_is_retried_with_every_attempt_in_its_trace() -> None:
    counter = [0]
    rt = an.Runtime(failing_agent(2, counter), retry=Retry(attempts=3, backoff=0.01))
    info = await rt.wait(await rt.submit("s", "hi"), timeout=5)
    assert (info.status, info.attempt, info.output) == ("done", 3, "finally")
    assert [a["status"] for a in info.attempts] == ["error", "error", "done"]
    trace = rt.get_trace(info.id)
    starts = trace.of_type(an.events.RunStarted)
    assert len(starts) == 3 and len({e.run_id for e in starts}) == 3
    assert {e.trace_id for e in trace} == {info.trace_id}
    session = rt.session("s")
    assert session.is_valid
    assert [m["role"] for m in session.to_openai()] == ["user", "assistant"]  # input once


async def test_a_task_that_keeps_failing_ends_in_error_within_its_bound() -> None:
    counter = [0]
    rt = an.Runtime(failing_agent(99, counter), retry=Retry(attempts=4, backoff=0.001))
    info = await rt.wait(await rt.submit("s", "hi"), timeout=5)
    assert (info.status, info.stop_reason, info.attempt) == ("error", "error", 4)
    assert counter[0] == 4 and "ModelCallFailed" in (info.error or "")
    stops = rt.get_trace(info.id).of_type(an.events.RunStopped)
    assert [e.reason for e in stops] == ["error"] * 4


async def test_a_programming_error_is_not_retried() -> None:
    def reply(request: Any) -> dict[str, Any]:
        raise ValueError("a bug")

    rt = an.Runtime(an.Agent(model=FunctionModel(reply)), retry=5)
    info = await rt.wait(await rt.submit("s", "hi"), timeout=5)
    assert (info.status, info.attempt) == ("error", 1)


async def test_cancel_pending_and_running() -> None:
    gate, started = asyncio.Event(), []
    rt = an.Runtime(gated_agent(gate, started), max_concurrency=1)
    running = await rt.submit("a", "first")
    pending = await rt.submit("b", "second")
    await eventually(lambda: started == ["first"])
    assert rt.status(pending).status == "pending"
    assert rt.cancel(pending) and rt.status(pending).status == "cancelled"
    assert rt.cancel(running)
    info = await rt.wait(running, timeout=5)
    assert (info.status, info.stop_reason) == ("cancelled", "cancelled")
    assert not rt.cancel(running)  # already over
    assert rt.session("a").is_valid and started == ["first"]
    with pytest.raises(an.TaskNotFound):
        rt.status("t-nope")


async def test_run_step_drives_a_task_one_stage_at_a_time() -> None:
    rt = an.Runtime(slow_tool_agent([]))
    gate, started = asyncio.Event(), []
    rt2 = an.Runtime(gated_agent(gate, started), max_concurrency=1)
    blocker = await rt2.submit("x", "block")  # keeps rt2's only worker busy
    task_id = await rt2.submit("s", "step me")
    await eventually(lambda: started == ["block"])
    first = await rt2.run_step(task_id)
    assert first.stage == "restore" and rt2.status(task_id).status == "paused"
    assert rt2.cancel(task_id) and rt2.status(task_id).status == "cancelled"
    gate.set()
    await rt2.wait(blocker, timeout=5)
    task_id = await rt.submit("s", "step me")
    stages = []
    while not rt.status(task_id).done:
        stages.append((await rt.run_step(task_id)).stage)
    assert stages[0] == "restore" and stages[-1] == "persist" and "execute_tools" in stages
    assert rt.status(task_id).output == "answer to step me"
    assert {e.task_id for e in rt.get_trace(task_id)} == {task_id}
    with pytest.raises(an.RunStateError):
        await rt.run_step(task_id)


async def test_traces_and_statuses_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "service.db"
    rt = an.Runtime(slow_tool_agent([]), store=an.SQLiteStore(path))
    task_id = await rt.submit("trip", "北京")
    before = await rt.wait(task_id, timeout=5)

    def rows(trace: an.Trace) -> list[tuple[Any, ...]]:
        return [(e.type, e.seq, e.stage, e.run_id, e.task_id, e.summary()) for e in trace]

    seen = rows(rt.get_trace(task_id))
    await rt.close()
    later = an.Runtime(slow_tool_agent([]), store=an.SQLiteStore(path))  # a new process's view
    assert later.status(task_id) == before
    assert rows(later.get_trace(task_id)) == seen and len(seen) > 10
    assert later.result(task_id).output == "answer to 北京"
    assert later.session("trip").to_openai() == rt.session("trip").to_openai()


async def test_log_lines_carry_every_id(caplog: pytest.LogCaptureFixture) -> None:
    rt = an.Runtime(echo_agent())
    with caplog.at_level(logging.INFO, logger="agentnb.service"):
        info = await rt.wait(await rt.submit("s", "hi"), timeout=5)
    records = [r for r in caplog.records if r.name == "agentnb.service"]
    assert records
    for r in records:
        assert (r.session_id, r.task_id, r.trace_id) == ("s", info.id, info.trace_id)  # type: ignore[attr-defined]
    assert records[-1].run_id == info.attempts[-1]["run_id"]  # type: ignore[attr-defined]


def test_bad_settings_are_configuration_errors() -> None:
    agent = echo_agent()
    with pytest.raises(an.ConfigurationError, match="on_full"):
        an.Runtime(agent, on_full="drop")  # type: ignore[arg-type]
    with pytest.raises(an.ConfigurationError, match="max_concurrency"):
        an.Runtime(agent, max_concurrency=0)
    with pytest.raises(an.ConfigurationError, match="no model"):
        an.Runtime(an.Agent())


async def test_closing_the_runtime_ends_every_task_on_record() -> None:
    gate, started = asyncio.Event(), []
    rt = an.Runtime(gated_agent(gate, started), max_concurrency=1)
    running = await rt.submit("a", "first")
    pending = await rt.submit("b", "second")
    await eventually(lambda: started == ["first"])
    await rt.close()
    assert [rt.status(t).status for t in (running, pending)] == ["cancelled", "cancelled"]
    assert rt.session("a").is_valid
    assert (await rt.wait(running, timeout=1)).error == "the runtime closed"


async def test_a_woken_waiter_that_is_cancelled_passes_its_room_on() -> None:
    """Issue 27 M13: with on_full="wait", the submitter woken for the free slot was cancelled
    before it used it; the wake-up was lost and the next submitter waited forever."""
    gate, started = asyncio.Event(), []
    rt = an.Runtime(gated_agent(gate, started), max_concurrency=1, max_queue=1, on_full="wait")
    await rt.submit("u0", "m0")
    await eventually(lambda: started == ["m0"])  # the worker took it
    held = await rt.submit("u1", "m1")  # the queue is full now
    first = asyncio.ensure_future(rt.submit("u2", "m2"))
    second = asyncio.ensure_future(rt.submit("u3", "m3"))
    await asyncio.sleep(0.01)
    assert not first.done() and not second.done()
    assert rt.cancel(held)  # room for one: the first waiter is woken...
    first.cancel()  # ...and cancelled before it could use it
    task_id = await asyncio.wait_for(second, 2)  # the room went on to the next waiter
    gate.set()
    assert (await rt.wait(task_id, timeout=5)).status == "done"
    await rt.close()


async def test_reject_holds_for_messages_that_waited_for_room() -> None:
    """Issue 27 M14: two messages for one idle session, both waiting for room with
    multitask="reject", were both admitted."""
    gate, started = asyncio.Event(), []
    rt = an.Runtime(gated_agent(gate, started), max_concurrency=1, max_queue=2, on_full="wait")
    await rt.submit("busy", "m0")
    await eventually(lambda: started == ["m0"])  # it runs (and holds the only worker)
    fillers = [await rt.submit(f"other{i}", "m") for i in range(2)]  # the queue is full
    waiting = [
        asyncio.ensure_future(rt.submit("s", f"for s {i}", multitask="reject")) for i in range(2)
    ]
    await asyncio.sleep(0.01)
    for task_id in fillers:  # room for both at once: the first for s is admitted, the
        rt.cancel(task_id)  # second finds s busy with it
    outcomes = await asyncio.gather(*waiting, return_exceptions=True)
    assert isinstance(outcomes[0], str) and isinstance(outcomes[1], an.SessionBusy), outcomes
    gate.set()
    await rt.join(timeout=5)
    users = [m["content"] for m in rt.session("s").to_openai() if m["role"] == "user"]
    assert users == ["for s 0"]
    await rt.close()


async def test_the_finished_tasks_kept_in_memory_are_bounded(tmp_path: Path) -> None:
    """Issue 27 (low): the finished-task table of a Runtime grew forever (~15 KB a task)."""
    rt = an.Runtime(echo_agent(), keep_finished=50)
    ids = [await rt.submit(f"s{i % 7}", f"m{i}") for i in range(200)]
    await rt.join(timeout=30)
    assert len(rt.list()) == 50 and [i.id for i in rt.list()] == ids[-50:]
    with pytest.raises(an.TaskNotFound, match="keep_finished"):
        rt.status(ids[0])  # forgotten, and the error says why
    assert rt.status(ids[-1]).status == "done"
    await rt.close()
    kept = an.Runtime(echo_agent(), store=an.SQLiteStore(tmp_path / "s.db"), keep_finished=50)
    ids = [await kept.submit("s", f"m{i}") for i in range(120)]
    for task_id in ids:
        await kept.wait(task_id, timeout=10)
    assert len(kept.backend.mine) == 50  # type: ignore[attr-defined]
    assert kept.status(ids[0]).output == "m0 ok"  # older ones answer from the store
    assert len(kept.list()) == 120
    await kept.close()
