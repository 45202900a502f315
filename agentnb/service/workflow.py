"""What runs inside the DBOS workflow of a task (in a worker process).

A task's workflow runs attempts as DBOS steps: an attempt that ended is checkpointed and never
runs again; one cut short by a crash runs again, resuming the session's last committed round
(:mod:`.attempt`). The backoff between attempts is a durable sleep (the retry policy drives
it as it drives the in-process backend's). Each attempt loads the session afresh from the
store (another worker may have written it) and keeps the task's row in the log current.

DBOS finds the runtime a workflow runs for through a *configured instance* (its own way of
binding workflows to objects, recorded by name so a restarted worker finds it again): one
:class:`TaskWorkflows` per process and application, pointed at the runtime whose workers run
in this process.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import TYPE_CHECKING, Any, cast

from ..errors import ConfigurationError
from ..runtime import Run
from .attempt import Abandoned, finish_attempt, start_attempt, status_of
from .jobs import JOB, Job, attempt_job
from .lease import Membership
from .policies import NO_RETRY, Retry, attempts
from .sqllog import SQLTaskLog
from .tasks import Status, TaskState
from .workers import process_gone

logger = logging.getLogger("agentnb.service")

if TYPE_CHECKING:
    from .durable import DBOS
    from .runtime import Runtime

__all__ = ["CLASS", "WORKFLOW", "bind", "execute", "launch", "take_over"]

WORKFLOW = "agentnb_task"
#: The queue every worker serves.
QUEUE = "agentnb"
#: The topic of the message that wakes a task awaiting approval (``rt.approve``/``deny``).
TOPIC = "agentnb-approval"
_FOREVER = 10 * 365 * 86400.0
#: The DBOS class name of the task workflows (with the application name as instance name).
CLASS = "agentnb.service"


def options(app_name: str, name: str, workflow_id: str, partition: str) -> dict[str, Any]:
    """What a client enqueues a workflow of ours with (in its session's partition)."""
    return {
        "queue_name": QUEUE,
        "workflow_name": name,
        "class_name": CLASS,
        "instance_name": app_name,
        "workflow_id": workflow_id,
        "queue_partition_key": partition,
        "app_version": "agentnb-1",
    }


@functools.cache
def _workflows() -> type[Any]:
    """Declare the task workflow (DBOS registers it for the whole process: once)."""
    import dbos

    @dbos.DBOS.dbos_class(CLASS)
    class TaskWorkflows(dbos.DBOSConfiguredInstance):
        def __init__(self, name: str) -> None:
            super().__init__(name)
            self.backend: DBOS | None = None

        @dbos.DBOS.workflow(name=WORKFLOW, max_recovery_attempts=200)
        async def run(self, task_id: str, session_id: str, text: str) -> dict[str, Any]:
            if self.backend is None:
                raise ConfigurationError("no DBOS-backed Runtime runs its workers here")
            return await execute(self.backend, task_id, session_id, text)

    return TaskWorkflows


@functools.cache
def _instance(app_name: str) -> Any:
    return _workflows()(app_name)


def bind(backend: DBOS | None, app_name: str) -> None:
    """Run ``app_name``'s task workflows in this process on ``backend`` (None: on nothing).
    Call before DBOS launches, so it recovers this process's workflows with their runtime."""
    workflows = _instance(app_name)
    if backend is not None and workflows.backend not in (None, backend):
        raise ConfigurationError(
            "one process runs one DBOS-backed Runtime's workers at a time: close the other "
            "first (await rt.close())"
        )
    workflows.backend = backend


async def launch(backend: DBOS) -> None:
    """Make this process a worker: join the store's workers (a live worker's id is refused),
    launch DBOS under the worker's id, and serve the queue, partitioned by session."""
    import dbos

    log = backend.rt.log
    assert isinstance(log, SQLTaskLog)  # bind() saw a persistent store
    member = Membership(
        log.workers,
        backend.executor_id,
        heartbeat=backend.heartbeat,
        lease=backend.lease,
        on_lost=backend.lose,
        reap=lambda: take_over(member),
        owner=backend,
    )
    await asyncio.to_thread(member.join)
    backend.member, backend.executor_id, log.worker = member, member.id, member.id
    bind(backend, backend.app_name)
    config: dict[str, Any] = {
        "name": backend.app_name,
        "system_database_url": backend.url,
        "application_version": "agentnb-1",
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.05,
        "executor_id": member.id,
    }
    dbos.DBOS(config=cast(Any, config))
    await asyncio.to_thread(dbos.DBOS.launch)
    await dbos.DBOS.register_queue_async(
        QUEUE,
        worker_concurrency=backend.rt.max_concurrency,
        partition_concurrency=1,
        polling_interval_sec=backend.polling,
        on_conflict="always_update",
    )


async def execute(backend: DBOS, task_id: str, session_id: str, text: str) -> dict[str, Any]:
    """The workflow's body: attempts (durable steps) under the retry policy, then the end."""
    import dbos

    rt = backend.rt

    async def attempt(_: int) -> dict[str, Any]:
        result: dict[str, Any] = await dbos.DBOS.run_step_async(
            {"name": "attempt"}, run_attempt, backend, task_id, session_id, text
        )
        return result

    known = rt.log.get(task_id)
    retry = NO_RETRY if known is not None and JOB in known.tags else rt.retry  # see .jobs
    while True:
        last = await attempts(
            retry, attempt, sleep=dbos.DBOS.sleep_async, retry_on=lambda r: r["retryable"]
        )
        if last is None or last["status"] != "awaiting_approval":
            break
        # a call waits for a person: a durable wait for rt.approve/deny (DBOS.send), at most
        # until its request lapses; then the next attempt resumes the round. The workflow
        # holds its session's partition meanwhile (and a worker_concurrency slot).
        left = last["expires"] - time.time() if last["expires"] is not None else _FOREVER
        await dbos.DBOS.recv_async(TOPIC, timeout_seconds=max(left, 0.0) + 0.5)
    task = _task(rt, task_id, session_id, text)
    status: Status = last["status"] if last is not None else "done"
    rt.finish(task, status, last.get("error") if last is not None else None)
    info = task.info()
    return {"status": info.status, "stop_reason": info.stop_reason}


def _task(rt: Runtime, task_id: str, session_id: str, text: str) -> TaskState:
    """The task as the log keeps it (submit wrote its row before the workflow existed)."""
    return rt.log.get(task_id) or TaskState(task_id, session_id, text)


async def run_attempt(backend: DBOS, task_id: str, session_id: str, text: str) -> dict[str, Any]:
    """One attempt (a DBOS step): what the step checkpoints is how it ended."""
    rt = backend.rt
    task = _task(rt, task_id, session_id, text)
    task.status = "running"
    task.started = task.started or time.time()
    task.owner = backend.executor_id
    rt.forget(session_id)  # another worker may have written it: read the store afresh
    session = rt.session(session_id)
    task.start_len = rt.log.start_len(task_id, len(session))
    sinks = rt.sinks(task)
    try:
        job = rt.job_of(task)
        if job is not None:
            return await _job(backend, task, session, job)
        run = start_attempt(
            rt.agent, session, rt.log, task, sinks, rt.approval_timeout, rt.max_lost
        )
    except Exception as exc:  # abandoned, or a job that failed: the task's error says why
        rt.changed(task)
        why = str(exc) if isinstance(exc, Abandoned) else f"{type(exc).__name__}: {exc}"
        return {"status": "error", "retryable": False, "expires": None, "error": why}
    if not isinstance(run, Run):  # the answer was committed already
        rt.changed(task)
        return {"status": "done", "retryable": False, "expires": None}
    task.run = run
    rt.started(task)  # the attempt is on record before it does anything
    backend.live.add(task_id, run)
    try:
        result = await finish_attempt(run)
    finally:
        backend.live.remove(task_id)
        task.run = None
        if run.result is not None:
            rt.log.put_trace(task_id, run.id, run.result.events)
        rt.changed(task)
        rt.forget(session_id)  # the next attempt reads it afresh: nothing kept per session
    status = status_of(result)
    expires = None
    if status == "awaiting_approval":
        task.status = status
        rt.changed(task)
        pending = rt.log.approvals.pending(task_id)
        expires = min((p.expires for p in pending if p.expires), default=None)
    return {"status": status, "retryable": Retry.retryable(result.error), "expires": expires}


async def _job(backend: DBOS, task: TaskState, session: Any, job: Job) -> dict[str, Any]:
    """One attempt of a job's task (see :mod:`.jobs`), its runs kept as they end."""
    rt, made = backend.rt, []

    def started(run: Run) -> None:
        made.append(run)
        backend.live.add(task.id, run)  # cancelled from anywhere: stopped here
        rt.started(task)

    try:
        status = await attempt_job(job, task, session, rt.sinks(task), rt.max_lost, started)
    finally:
        backend.live.remove(task.id)
        task.run = None
        for run in made:
            if run.result is not None:
                rt.log.put_trace(task.id, run.id, run.result.events)
        rt.changed(task)
        rt.forget(task.session_id)
    return {"status": status, "retryable": False, "expires": None}


def take_over(member: Membership) -> None:
    """Take each lost worker (one survivor wins each) and hand its pending workflows back to
    the queue with DBOS's recovery for other executors, the one the admin API's
    ``/dbos-workflow-recovery`` runs; they resume on whichever worker dequeues them (called
    after every beat, from the heartbeat thread)."""
    import dbos

    for row in member.lost_workers():
        if member.take(row):
            handles = dbos.DBOS._recover_pending_workflows([row.id])
            logger.warning(
                "worker %s took over lost worker %s (%s): %d workflows back in the queue",
                member.id,
                row.id,
                "its process is gone" if process_gone(row) else f"no beat for {row.age:.1f} s",
                len(handles),
            )
