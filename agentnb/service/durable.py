"""The durable backend on DBOS: the same Runtime API, tasks that survive their process.

Why DBOS (``dbos`` on PyPI, the ``service`` extra): durable workflows and queues as a
library, in-process on SQLite and across processes on Postgres, with cancellation,
per-partition concurrency and recovery of a dead worker's workflows (arq is in maintenance
mode, Celery has no asyncio tasks, Temporal and Hatchet download a server binary). Each task
is one workflow (its id is the task id): its attempts are steps, checkpointed when they end,
and the backoff between them a durable sleep. The queue is partitioned by session id with
``partition_concurrency=1``, so a session runs one task at a time on all workers together,
in submission order.

Inside an attempt agentnb's own commits do the fine-grained part: the session is committed
at the end of every tool round, and side-effecting calls are journalled before they run
(:mod:`.attempt`), so a worker killed mid-attempt resumes from the last committed round,
answers an in-flight side-effecting call ``uncertain`` and never runs it again.

    rt = an.Runtime(agent, store=PostgresStore(url), backend=DBOS(url_of_dbos_db, workers=False))
    # and on each worker machine:  python -m agentnb worker --agent app:make_agent \\
    #     --backend postgresql://…/dbos --store postgresql://…/app
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, RunStateError, SessionBusy
from ..events import Event
from . import workflow
from .lease import Membership
from .live import LiveRuns
from .sqllog import SQLTaskLog
from .tasks import FINAL, QueueFull, TaskInfo, TaskState

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["DBOS"]

QUEUE = workflow.QUEUE
#: What a workflow's status in the engine says of the task.
_STATUS = {"ENQUEUED": "pending", "DELAYED": "pending", "PENDING": "running"}
_STATUS.update(SUCCESS="done", CANCELLED="cancelled")


def _dbos() -> Any:
    try:
        import dbos
    except ImportError:
        raise ConfigurationError(
            "the DBOS backend needs the dbos package: pip install 'agentnb[service]'"
        ) from None
    return dbos


class DBOS:
    """Tasks as DBOS workflows, in the system database at ``url``.

    Args:
        url: DBOS's own database: ``sqlite:///path.db`` (one process) or
            ``postgresql://…/dbname`` (workers in several processes; a database of its own).
        workers: run tasks in this process (DBOS is launched here). ``False``: only submit and
            watch (a notebook in front of ``python -m agentnb worker`` processes).
        executor_id: this worker's id among the workers; a unique one by default (host, pid,
            start time). A live worker's id is refused; a restarted worker given its old id
            takes back what its previous life left, if no survivor took it first.
        polling: seconds between the queue's polls for work.
        heartbeat, lease: a worker renews its lease every ``heartbeat`` seconds; the workers
            take over one whose lease lapsed (or, on the same machine, whose process is gone):
            its tasks resume elsewhere within about ``lease + heartbeat`` seconds.
        exit_when_lost: a worker declared dead (its lease had lapsed) exits at once (the
            worker command); otherwise it cancels its runs and takes no more work.
    """

    name = "dbos"
    durable = True

    def __init__(
        self,
        url: str,
        *,
        workers: bool = True,
        executor_id: str | None = None,
        polling: float = 0.1,
        app_name: str = "agentnb",
        heartbeat: float = 1.0,
        lease: float = 5.0,
        exit_when_lost: bool = False,
    ) -> None:
        self.url = url
        self.workers = workers
        self.executor_id = executor_id
        self.polling = polling
        self.app_name = app_name
        self.heartbeat, self.lease, self.exit_when_lost = heartbeat, lease, exit_when_lost
        self._starting: asyncio.Lock | None = None
        self.client: Any = None
        #: This process among the workers (when it runs tasks): see :mod:`.lease`.
        self.member: Membership | None = None
        self.lost: str | None = None  #: why this worker stopped running tasks
        self._mine: list[str] = []
        #: The attempts running in this process's workflows.
        self.live = LiveRuns(self)

    def bind(self, rt: Runtime) -> None:
        if not rt.persistent:
            raise ConfigurationError(
                "the DBOS backend needs a store every worker reaches (SQLiteStore or "
                "PostgresStore): with an in-memory store a restarted worker finds nothing"
            )
        self.rt = rt

    async def start(self) -> None:
        """Launch DBOS in this process (workers) and connect the client (once, also when
        several submits come at once)."""
        if self.client is not None:
            return
        self._starting = self._starting or asyncio.Lock()
        async with self._starting:
            if self.client is None:
                await self._start()

    async def _start(self) -> None:
        if self.lost is not None:
            raise RunStateError(f"this worker stopped running tasks: {self.lost}")
        dbos = _dbos()
        if self.workers:
            await workflow.launch(self)
        self.client = await asyncio.to_thread(
            dbos.DBOSClient, system_database_url=self.url, application_name=self.app_name
        )

    # -- submitting and asking ---------------------------------------------------------------
    async def submit(self, task: TaskState, multitask: str) -> None:
        await self.start()
        rt = self.rt
        if multitask in ("interrupt", "rollback"):
            raise ConfigurationError(
                f"multitask={multitask!r} needs the in-process backend (it cancels a run in "
                "this process); the DBOS backend enqueues or rejects"
            )
        if multitask == "reject":
            busy = [t for t in rt.log.tasks(task.session_id) if t.status not in FINAL]
            busy = [t for t in busy if self._merged(t).status not in FINAL]
            if busy:
                raise SessionBusy(
                    f"session {task.session_id!r} already has task {busy[0].id}; "
                    "multitask='reject' refuses a second message while it is busy",
                    task.session_id,
                    busy[0].id,
                )
        log = rt.log
        assert isinstance(log, SQLTaskLog)  # bind() saw a persistent store
        # admitted in one transaction: concurrent submitters never overfill the queue
        while (depth := await asyncio.to_thread(log.admit, task, rt.max_queue)) is not None:
            if rt.on_full == "reject":
                raise QueueFull(
                    f"the queue holds {depth} tasks (max_queue={rt.max_queue}); this task was "
                    "not accepted: submit it later, or use on_full='wait'",
                    depth,
                )
            await asyncio.sleep(self.polling)
        rt.changed(task, write=False)  # its row is kept: a worker always finds it
        options = workflow.options(self.app_name, workflow.WORKFLOW, task.id, task.session_id)
        try:
            await self.client.enqueue_async(options, task.id, task.session_id, task.text)
        except Exception as exc:  # not accepted after all: its row goes, and we say why
            await asyncio.to_thread(log.drop, task.id)
            if "workflow_status" in str(exc):  # DBOS's tables: a worker makes them
                raise ConfigurationError(
                    "DBOS's database has no tables yet: start a worker first (python -m "
                    "agentnb worker ..., or a Runtime with DBOS(url) here); nothing was queued"
                ) from exc
            raise
        self._mine.append(task.id)

    def depth(self) -> int:
        if self.client is None:
            return sum(1 for t in self.rt.log.tasks() if t.status == "pending")
        rows = self.client.list_queued_workflows(
            queue_name=QUEUE, status="ENQUEUED", load_input=False, load_output=False
        )
        return len(rows)

    def _merged(self, task: TaskState, engine: str | None = None, known: bool = False) -> TaskState:
        """The log's row, with the engine's word on whether the task ended."""
        if task.status in FINAL or self.client is None:
            return task
        if not known:
            found = self.client.list_workflows(
                workflow_ids=[task.id], load_input=False, load_output=False
            )
            engine = found[0].status if found else None
        if engine is None or engine == "SUCCESS":
            return task  # not enqueued yet, or the worker's own row is about to say the end
        status = _STATUS.get(engine, "error")  # ERROR, MAX_RECOVERY_ATTEMPTS_EXCEEDED
        if status == "running" and task.status != "pending":
            return task  # the worker's row says more (paused, its attempt)
        task.status = status  # type: ignore[assignment]
        if status in FINAL and task.error is None and status == "error":
            task.error = f"the engine ended the task's workflow: {engine}"
        return task

    def task(self, task_id: str) -> TaskState:
        task = self.rt.log.get(task_id)
        if task is None:
            raise self.rt.missing(task_id)
        return self._merged(task)

    def tasks(self, tags: dict[str, str] | None = None) -> list[TaskState]:
        tasks = self.rt.log.tasks(tags=tags)
        open_ids = [t.id for t in tasks if t.status not in FINAL]
        if not open_ids or self.client is None:
            return tasks
        engine = {
            w.workflow_id: w.status
            for w in self.client.list_workflows(
                workflow_ids=open_ids, load_input=False, load_output=False
            )
        }
        return [self._merged(t, engine.get(t.id), known=True) for t in tasks]

    def submitted(self) -> list[str]:
        return list(self._mine)

    async def wait(self, task_id: str) -> TaskInfo:
        await self.start()
        handle = await self.client.retrieve_workflow_async(task_id)
        with contextlib.suppress(Exception):  # cancelled or failed: the status says which
            await handle.get_result(polling_interval_sec=self.polling)
        deadline = time.monotonic() + 5
        while True:  # the engine's end is final; the log's row follows within a moment
            info = self.task(task_id).info()
            if info.done or time.monotonic() > deadline:
                return info
            await asyncio.sleep(0.05)

    def cancel(self, task_id: str) -> bool:
        task = self.task(task_id)
        if task.status in FINAL:
            return False
        self.client.cancel_workflow(task_id)
        self.live.stop(task_id)  # running here: stop it now, not at the workflow's next step
        if task.status == "awaiting_approval":  # its open calls get their answer
            self.rt.session(task.session_id).repair(
                "cancelled: the task was cancelled while this call awaited approval"
            )
        self.rt.finish(task, "cancelled")
        return True

    async def run_step(self, task_id: str) -> Event:
        raise RunStateError(
            "run_step drives a task in this process: use the in-process backend to step tasks"
        )

    async def recover(self) -> list[str]:
        """Start this worker (it may not have started: a worker starts on first use); workers
        take over lost workers' workflows themselves (see .lease), so none is named here."""
        await self.start()
        return []

    async def wake(self, task_id: str) -> None:
        """Tell the task's workflow its calls were answered (a durable message)."""
        await self.start()
        await self.client.send_async(task_id, "decided", workflow.TOPIC)

    def lose(self, why: str) -> None:
        """Declared dead by another worker (its lease had lapsed): stop (from its thread)."""
        self.lost = why
        if self.exit_when_lost:  # the worker command: its taker runs its tasks now
            print(f"agentnb worker {self.executor_id} exits: {why}", file=sys.stderr, flush=True)
            os._exit(75)
        for task_id in list(self.live.runs):
            self.live.stop(task_id)

    async def close(self) -> None:
        self.live.close()
        if self.client is not None:
            await asyncio.to_thread(self.client.destroy)
            self.client = None
        if self.member is not None:
            dbos = _dbos()
            await asyncio.to_thread(dbos.DBOS.destroy, workflow_completion_timeout_sec=0)
            workflow.bind(None, self.app_name)
            # DBOS made its thread pool this loop's default executor, and it is shut down
            # now: give the loop a fresh one, or the next asyncio.to_thread (a second
            # Runtime in this notebook) fails with "cannot schedule new futures".
            asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor())
            await asyncio.to_thread(self.member.leave)
            self.member = None
