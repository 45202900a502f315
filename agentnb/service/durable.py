"""The durable backend on DBOS: the same Runtime API, tasks that survive their process.

Why DBOS (``dbos`` on PyPI, the ``service`` extra): durable workflows and queues as a
library, in-process on SQLite and across processes on Postgres, with cancellation,
per-partition concurrency and recovery of a dead worker's workflows when it starts again
(arq is in maintenance mode, Celery has no asyncio tasks, Temporal and Hatchet download a
server binary). Each task is one workflow (its id is the task id): its attempts are steps,
checkpointed when they end, and the backoff between them a durable sleep. The queue is
partitioned by session id with ``partition_concurrency=1``, so a session runs one task at a
time on all workers together, in submission order.

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
import contextlib
import time
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, RunStateError, SessionBusy
from ..events import Event
from .tasks import FINAL, QueueFull, Task, TaskInfo
from .workflow import ACTIVE, WORKFLOW, register

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["DBOS"]

QUEUE = "agentnb"
_STATUS = {"ENQUEUED": "pending", "DELAYED": "pending", "PENDING": "running",
           "SUCCESS": "done", "CANCELLED": "cancelled"}  # fmt: skip


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
        executor_id: this process's name among the workers; a restarted worker with the same
            id takes back the workflows its previous life left unfinished.
        polling: seconds between the queue's polls for work.
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
    ) -> None:
        self.url = url
        self.workers = workers
        self.executor_id = executor_id
        self.polling = polling
        self.app_name = app_name
        self._started = False
        self._client: Any = None

    def bind(self, rt: Runtime) -> None:
        if not rt.persistent:
            raise ConfigurationError(
                "the DBOS backend needs a store every worker reaches (SQLiteStore or "
                "PostgresStore): with an in-memory store a restarted worker finds nothing"
            )
        self.rt = rt

    async def start(self) -> None:
        """Launch DBOS in this process (workers) and connect the client."""
        if self._started:
            return
        self._started = True
        dbos = _dbos()
        if self.workers:
            if ACTIVE.get("rt") not in (None, self.rt):
                raise ConfigurationError("one process runs one DBOS-backed Runtime's workers")
            ACTIVE["rt"] = self.rt
            register()
            config: dict[str, Any] = {
                "name": self.app_name,
                "system_database_url": self.url,
                "application_version": "agentnb-1",
                "log_level": "WARNING",
                "notification_listener_polling_interval_sec": 0.05,
            }
            if self.executor_id is not None:
                config["executor_id"] = self.executor_id
            dbos.DBOS(config=config)
            await asyncio.to_thread(dbos.DBOS.launch)
            await dbos.DBOS.register_queue_async(
                QUEUE,
                worker_concurrency=self.rt.max_concurrency,
                partition_concurrency=1,
                polling_interval_sec=self.polling,
                on_conflict="always_update",
            )
        self._client = await asyncio.to_thread(
            dbos.DBOSClient, system_database_url=self.url, application_name=self.app_name
        )

    # -- submitting and asking ---------------------------------------------------------------
    async def submit(self, task: Task, multitask: str) -> None:
        await self.start()
        rt = self.rt
        if multitask in ("interrupt", "rollback"):
            raise ConfigurationError(
                f"multitask={multitask!r} needs the in-process backend (it cancels a run in "
                "this process); the DBOS backend enqueues or rejects"
            )
        if multitask == "reject":
            busy = [i for i in rt.log.infos() if i.session_id == task.session_id and not i.done]
            busy = [i for i in busy if self.status(i.id).status not in FINAL]
            if busy:
                raise SessionBusy(
                    f"session {task.session_id!r} already has task {busy[0].id}; "
                    "multitask='reject' refuses a second message while it is busy",
                    task.session_id,
                    busy[0].id,
                )
        depth = await self.queue_depth()
        while depth >= rt.max_queue:
            if rt.on_full == "reject":
                raise QueueFull(
                    f"the queue holds {depth} tasks (max_queue={rt.max_queue}); this task was "
                    "not accepted: submit it later, or use on_full='wait'",
                    depth,
                )
            await asyncio.sleep(self.polling)
            depth = await self.queue_depth()
        rt.log.put(task.info())  # before the workflow exists: a worker always finds its row
        options = {
            "queue_name": QUEUE,
            "workflow_name": WORKFLOW,
            "workflow_id": task.id,
            "queue_partition_key": task.session_id,
            "app_version": "agentnb-1",
        }
        await self._client.enqueue_async(options, task.id, task.session_id, task.text)

    async def queue_depth(self) -> int:
        """Tasks accepted and not started (DBOS's ENQUEUED workflows of this queue)."""
        await self.start()
        rows = await self._client.list_queued_workflows_async(
            queue_name=QUEUE, status="ENQUEUED", load_input=False, load_output=False
        )
        return len(rows)

    def _merge(self, info: TaskInfo, engine: str | None) -> TaskInfo:
        """The log's row, with the engine's word on whether it ended."""
        status = _STATUS.get(engine or "", "error" if engine else info.status)
        if engine == "SUCCESS" or (engine == "PENDING" and info.status != "pending"):
            return info  # the worker's own row is the richer one
        if status == info.status:
            return info
        row = info.row()
        row["status"] = status
        if status in FINAL and not row["stop_reason"]:
            row["stop_reason"] = "cancelled" if status == "cancelled" else "error"
        return TaskInfo.from_row(row)

    def status(self, task_id: str) -> TaskInfo:
        info = self.rt.log.get(task_id)
        if info is None:
            raise self.rt.missing(task_id)
        if info.done or self._client is None:
            return info
        found = self._client.list_workflows(
            workflow_ids=[task_id], load_input=False, load_output=False
        )
        return self._merge(info, found[0].status if found else None)

    def infos(self) -> list[TaskInfo]:
        infos = self.rt.log.infos()
        open_ids = [i.id for i in infos if not i.done]
        if not open_ids or self._client is None:
            return infos
        engine = {
            w.workflow_id: w.status
            for w in self._client.list_workflows(
                workflow_ids=open_ids, load_input=False, load_output=False
            )
        }
        return [self._merge(i, engine.get(i.id)) if not i.done else i for i in infos]

    async def wait(self, task_id: str) -> TaskInfo:
        await self.start()
        handle = await self._client.retrieve_workflow_async(task_id)
        with contextlib.suppress(Exception):  # cancelled or failed: the status says which
            await handle.get_result(polling_interval_sec=self.polling)
        deadline = time.monotonic() + 5
        while True:  # the engine's end is final; the log's row follows within a moment
            info = self.status(task_id)
            if info.done or time.monotonic() > deadline:
                return info
            await asyncio.sleep(0.05)

    def cancel(self, task_id: str) -> bool:
        info = self.status(task_id)
        if info.done:
            return False
        self._client.cancel_workflow(task_id)
        row = info.row()
        row.update(status="cancelled", stop_reason="cancelled")
        self.rt.log.put(TaskInfo.from_row(row))
        return True

    async def run_step(self, task_id: str) -> Event:
        raise RunStateError(
            "run_step drives a task in this process: use the in-process backend to step tasks"
        )

    async def close(self) -> None:
        if self._client is not None:
            await asyncio.to_thread(self._client.destroy)
            self._client = None
        if self.workers and self._started and ACTIVE.get("rt") is self.rt:
            dbos = _dbos()
            await asyncio.to_thread(dbos.DBOS.destroy, workflow_completion_timeout_sec=0)
            ACTIVE.pop("rt", None)
        self._started = False
