"""The runtime as a service: a bounded task queue in front of the agent (002 §3.1-3.2).

:class:`Runtime` (``an.Runtime``) with its policies; :class:`InProcess` is the default
backend, :class:`~agentnb.service.durable.DBOS` the durable one (imported lazily: it needs
the ``service`` extra).
"""

from __future__ import annotations

from typing import Any

from .inprocess import InProcess
from .policies import Retry
from .runtime import Runtime
from .tasks import STATUSES, QueueFull, TaskInfo, TaskNotFound

__all__ = [
    "DBOS",
    "STATUSES",
    "InProcess",
    "QueueFull",
    "Retry",
    "Runtime",
    "TaskInfo",
    "TaskNotFound",
]


def __getattr__(name: str) -> Any:
    if name == "DBOS":  # dbos and sqlalchemy load only when the durable backend is used
        from .durable import DBOS

        return DBOS
    raise AttributeError(name)
