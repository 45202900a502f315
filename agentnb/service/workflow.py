"""What runs inside the DBOS workflow of a task (in a worker process).

A task's workflow loads the session afresh from the store (another worker may have written
it), fixes where the task's input goes (once, in the task log), then runs attempts as DBOS
steps: an attempt that ended is checkpointed and never runs again; one cut short by a crash
runs again from the session's last committed round (:mod:`.attempt`). Backoff between
attempts is a durable sleep.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ..storage.trace import Trace
from .attempt import run_attempt
from .tasks import Task

if TYPE_CHECKING:
    from ..runtime.run import Run
    from .runtime import Runtime

__all__ = ["ACTIVE", "WORKFLOW", "execute", "register"]

WORKFLOW = "agentnb_task"
#: The runtime whose agent this process's workflows run (set when a worker starts).
ACTIVE: dict[str, Runtime] = {}


async def _watch(rt: Runtime, task_id: str, runs: list[Run], every: float = 0.2) -> None:
    """Cancel the attempt's run as soon as the task's workflow is cancelled (DBOS itself stops
    a cancelled workflow only at its next step)."""
    client = getattr(rt.backend, "_client", None)
    while client is not None:
        await asyncio.sleep(every)
        found = await asyncio.to_thread(
            client.list_workflows, workflow_ids=[task_id], load_input=False, load_output=False
        )
        if found and found[0].status == "CANCELLED" and runs:
            runs[-1].cancel()
            return


def register() -> None:
    """Declare the task workflow (once per process, before DBOS launches)."""
    if "_workflow" in globals():
        return
    import dbos

    @dbos.DBOS.workflow(name=WORKFLOW, max_recovery_attempts=200)
    async def agentnb_task(task_id: str, session_id: str, text: str) -> dict[str, Any]:
        return await execute(ACTIVE["rt"], task_id, session_id, text)

    globals()["_workflow"] = agentnb_task


async def execute(rt: Runtime, task_id: str, session_id: str, text: str) -> dict[str, Any]:
    import dbos

    info = rt.log.get(task_id)
    task = Task(task_id, session_id, text)
    if info is not None:
        task.trace_id, task.created = info.trace_id, info.created
    task.status, task.started = "running", time.time()
    rt.forget(session_id)  # another worker may have written it: read the store afresh
    task.start_len = rt.log.start_len(task_id, len(rt.session(session_id)))
    rt.log.put(task.info())
    while True:
        task.attempt += 1
        record = await dbos.DBOS.run_step_async(
            {"name": "attempt"}, attempt, rt, task_id, session_id, text, task.start_len,
            task.trace_id, task.attempt,
        )  # fmt: skip
        task.attempts.append(record)
        task.iteration, task.tokens = record["iteration"], record["tokens"]
        if record["retryable"] and task.attempt < rt.retry.attempts:
            rt.log.put(task.info())
            await dbos.DBOS.sleep_async(rt.retry.delay(task.attempt))
            continue
        break
    task.status = record["status"]
    task.stop_reason, task.output, task.error = (
        record["stop_reason"], record["output"], record["error"]
    )  # fmt: skip
    task.finished = time.time()
    rt.log.end_task(task_id)
    final = task.info()
    rt.log.put(final)
    return final.row()


async def attempt(
    rt: Runtime, task_id: str, session_id: str, text: str, start_len: int, trace_id: str, n: int
) -> dict[str, Any]:
    """One attempt (a DBOS step): its record is what the step checkpoints."""
    rt.forget(session_id)
    session = rt.session(session_id)
    runs: list[Run] = []
    watcher = asyncio.ensure_future(_watch(rt, task_id, runs))
    try:
        outcome = await run_attempt(
            rt.agent, session, task_id=task_id, trace_id=trace_id, text=text,
            start_len=start_len, log=rt.log, sinks=[], on_run=runs.append,
        )  # fmt: skip
    finally:
        watcher.cancel()
    rt.log.put_trace(task_id, n, Trace(outcome.events).to_jsonl())
    record = outcome.record(n)
    record.update(output=outcome.output, retryable=outcome.retryable)
    return record
