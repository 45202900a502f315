"""The runtime's job API (issue 35): tags on tasks and on every run they make, tasks found by
their tags, a set waited for, and a job that runs a tagged task's attempts; a task's info is a
view over its runs' records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.models import FunctionModel
from agentnb.service import Retry
from agentnb.service.jobs import Attempt
from tests.service.test_ids import _agent


def _rt(tmp_path: Path | None, **options: Any) -> an.Runtime:
    store = an.SQLiteStore(tmp_path / "app.db") if tmp_path is not None else None
    return an.Runtime(_agent(**options.pop("agent", {})), store=store, **options)


@pytest.mark.parametrize("persistent", [False, True])
async def test_a_tasks_tags_are_on_every_run_and_find_it(tmp_path: Path, persistent: bool) -> None:
    rt = _rt(tmp_path if persistent else None, agent={"failures": 1}, retry=Retry(3, 0.01))
    a = await rt.submit("s1", "北京", tags={"batch": "b1", "who": "x"})
    b = await rt.submit("s2", "上海", tags={"batch": "b1", "who": "y"})
    c = await rt.submit("s3", "广州", tags={"batch": "b2"})
    infos = await rt.gather([a, b, c], timeout=30)
    assert [i.id for i in infos] == [a, b, c] and {i.status for i in infos} == {"done"}
    assert [i.id for i in rt.list(tags={"batch": "b1"})] == [a, b]
    assert [i.id for i in rt.list(tags={"batch": "b1", "who": "y"})] == [b]
    assert rt.list(tags={"batch": "b3"}) == [] and len(rt.list()) == 3
    first = infos[0]  # its first attempt failed (the model's 503): two runs, each tagged
    assert [r.tags for r in first.runs] == [
        {"batch": "b1", "who": "x", "task_id": a, "attempt": "1"},
        {"batch": "b1", "who": "x", "task_id": a, "attempt": "2"},
    ]
    assert first.runs == tuple(r for r in rt.session("s1").runs if r.task_id == a)
    await rt.close()
    if persistent:  # the tags and the records come back from the log
        again = _rt(tmp_path)
        assert [i.id for i in again.list(tags={"batch": "b1"})] == [a, b]
        assert [r.tags for r in again.status(a).runs] == [r.tags for r in first.runs]
        await again.close()


async def test_the_services_own_tags_are_refused() -> None:
    rt = _rt(None)
    for tags in ({"task_id": "x"}, {"attempt": "1"}, {"": "x"}, {"a": 1}):
        with pytest.raises(an.ConfigurationError):
            await rt.submit("s", "北京", tags=tags)  # type: ignore[arg-type]
    await rt.close()


@pytest.mark.parametrize("persistent", [False, True])
async def test_a_tasks_info_is_read_from_its_runs_records(tmp_path: Path, persistent: bool) -> None:
    """Every figure the queue view shows of a task - outcome, tokens, latency, ids - is its
    runs' records (``session.runs``), as they are."""
    rt = _rt(tmp_path if persistent else None, agent={"failures": 1}, retry=Retry(3, 0.01))
    info = await rt.wait(await rt.submit("s", "北京"), timeout=30)
    runs = [r for r in rt.session("s").runs if r.task_id == info.id]
    last = runs[-1]
    assert info.runs == tuple(runs) and info.attempt == len(runs) == 2
    assert (
        (info.stop_reason, info.output)
        == (last.stop_reason, last.output)
        == (
            "final_answer",
            "G1",
        )
    )
    assert info.tokens == sum(r.usage.total_tokens for r in runs) > 0
    assert info.latency == sum(r.latency for r in runs) > 0
    assert info.iteration == last.iterations
    assert info.trace_id == last.trace_id == runs[0].trace_id
    for row, record in zip(info.attempts, runs, strict=True):
        assert (row["run_id"], row["stop_reason"], row["latency"]) == (
            record.run_id,
            record.stop_reason,
            record.latency,
        )
        assert row["tokens"] == record.usage.total_tokens
    result = rt.result(info.id)
    assert result.record is last and result.usage == last.usage
    await rt.close()
    if persistent:
        again = _rt(tmp_path)
        back = again.status(info.id)
        assert (back.tokens, back.latency, back.trace_id) == (
            info.tokens,
            info.latency,
            info.trace_id,
        )
        await again.close()


async def test_a_job_runs_its_tasks_attempt(tmp_path: Path) -> None:
    """A task tagged job=<name> is run by the job served under that name: each run it starts
    is one of the task's (tagged, under the task's trace); the last is its result."""
    rt = _rt(tmp_path)
    model = FunctionModel(lambda request: f"answer {len(request.messages)}")
    helper = an.Agent("a helper", model=model)

    async def job(attempt: Attempt) -> None:
        assert (attempt.text, attempt.number, attempt.tags["k"]) == ("go", 1, "v")
        await attempt.start(helper, "first, the scene").finish()
        await attempt.start(helper, attempt.text, tags={"turn": "last"}).finish()

    rt.serve("mine", job)
    info = await rt.wait(await rt.submit("j", "go", tags={"job": "mine", "k": "v"}), timeout=30)
    assert (info.status, info.attempt, info.output) == ("done", 1, "answer 4")
    assert [r.tags.get("turn") for r in info.runs] == [None, "last"]
    assert {r.tags["attempt"] for r in info.runs} == {"1"} and len(info.attempts) == 2
    assert len({r.trace_id for r in info.runs}) == 1
    assert {e.run_id for e in rt.get_trace(info.id)} == {r.run_id for r in info.runs}
    assert rt.result(info.id).record is info.runs[-1]
    missing = await rt.wait(await rt.submit("k", "go", tags={"job": "nobody's"}), timeout=30)
    assert missing.status == "error" and "no job of that name is served here" in missing.error
    await rt.close()


async def test_a_jobs_attempt_after_a_lost_one_starts_over(tmp_path: Path) -> None:
    """A worker died under a job's attempt: the next starts from where the task began (the
    dead one's messages go; its run stays on record, marked lost), never half way."""
    from agentnb.service.attempt import LOST
    from agentnb.service.tasks import TaskState

    rt = _rt(tmp_path)
    helper = an.Agent(model=FunctionModel(lambda request: "done"))
    seen: list[int] = []

    async def job(attempt: Attempt) -> None:
        seen.append(len(attempt.session))
        await attempt.start(helper, attempt.text).finish()

    rt.serve("mine", job)
    session = rt.session("j")
    session.append({"role": "user", "content": "go"})  # the dead attempt's, half way
    session.append({"role": "assistant", "content": "half"})
    task = TaskState("t-0000000000000001abcdef", "j", "go", tags={"job": "mine"})
    dead = an.Agent(model=helper.model).start("go", tags={"job": "mine", "attempt": "1"})
    task.runs.append(dead.record)  # its record, never finished (the worker died)
    task.status = "running"
    rt.log.put(task)
    rt.log.start_len(task.id, 0)
    assert await rt.recover() == [task.id]
    info = await rt.wait(task.id, timeout=30)
    assert (info.status, info.attempt, seen) == ("done", 2, [0])
    assert info.runs[0].detail == LOST and info.runs[-1].tags["attempt"] == "2"
    assert [m.role for m in rt.session("j").messages] == ["user", "assistant"]
    await rt.close()
