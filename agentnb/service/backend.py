"""Backend: where a :class:`~agentnb.service.Runtime`'s tasks run, and all it asks of one.

:class:`~agentnb.service.InProcess` (asyncio tasks of this process, the default) and
:class:`~agentnb.service.durable.DBOS` (durable workflows, in this process or in worker
processes) implement it.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..events import Event
    from .runtime import Runtime
    from .tasks import TaskInfo, TaskState

__all__ = ["Backend"]


class Backend(Protocol):
    """Where tasks run: :class:`InProcess` (default) or a durable engine. Everything
    :class:`Runtime` asks of a backend is here."""

    name: str
    #: True when tasks outlive this process (the engine keeps them).
    durable: bool

    def bind(self, rt: Runtime) -> None: ...
    async def submit(self, task: TaskState, multitask: str) -> None: ...
    def task(self, task_id: str) -> TaskState:
        """The task as it is now (:class:`TaskNotFound` when nobody knows it)."""
        ...

    def tasks(self, tags: dict[str, str] | None = None) -> builtins.list[TaskState]:
        """Every task it knows (this runtime's and its store's), in submission order; with
        ``tags``, at least those submitted with them (a store may narrow its read)."""
        ...

    def submitted(self) -> builtins.list[str]:
        """The ids submitted through this runtime, in order."""
        ...

    def depth(self) -> int:
        """Tasks accepted and not started."""
        ...

    async def wait(self, task_id: str) -> TaskInfo: ...
    def cancel(self, task_id: str) -> bool: ...
    async def run_step(self, task_id: str) -> Event: ...
    async def recover(self) -> builtins.list[str]: ...
    async def wake(self, task_id: str) -> None:
        """A task awaiting approval was answered: it resumes."""
        ...

    async def close(self) -> None: ...
