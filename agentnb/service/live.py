"""The runs of tasks in this process's DBOS workflows, each stopped as soon as its task's
workflow is cancelled from anywhere (DBOS itself stops a cancelled workflow only at its next
step)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime import Run
    from .durable import DBOS

__all__ = ["LiveRuns"]


class LiveRuns:
    """The attempts running in this process's workflows, each cancelled as soon as its
    task's workflow is cancelled from anywhere (DBOS itself stops a cancelled workflow only
    at its next step). DBOS runs workflows on an event loop of its own, in a thread: a run is
    cancelled from other threads through that loop."""

    def __init__(self, backend: DBOS, every: float = 0.2) -> None:
        self.backend = backend
        self.every = every
        self.runs: dict[str, Run] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.watcher: asyncio.Task[None] | None = None

    def add(self, task_id: str, run: Run) -> None:
        self.runs[task_id] = run
        self.loop = asyncio.get_running_loop()  # DBOS's own
        if self.watcher is None or self.watcher.done():
            self.watcher = asyncio.ensure_future(self._watch())

    def remove(self, task_id: str) -> None:
        self.runs.pop(task_id, None)

    def stop(self, task_id: str) -> None:
        run, loop = self.runs.pop(task_id, None), self.loop
        if run is not None and loop is not None:
            loop.call_soon_threadsafe(run.cancel)

    async def _watch(self) -> None:
        while self.runs and (client := self.backend.client) is not None:
            await asyncio.sleep(self.every)
            found = await asyncio.to_thread(
                client.list_workflows,
                workflow_ids=list(self.runs),
                status="CANCELLED",
                load_input=False,
                load_output=False,
            )
            for w in found:
                self.stop(w.workflow_id)

    def close(self) -> None:
        if self.watcher is not None and self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.watcher.cancel)
        self.watcher = None
