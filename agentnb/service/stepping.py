"""Driving a task from outside, one stage per call (002 §3.1's ``run_step``).

The first ``run_step`` takes a pending task off the queue (the workers leave it alone from
then on), starts its run as a stepper and advances it one stage; between calls the task is
``paused``. Its run is the task's only attempt (no retries: whoever steps it decides). It
goes through the backend's public steps, as the workers do: ``begin``, ``start``,
``attempted``, ``end``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import RunStateError
from .attempt import status_of
from .tasks import FINAL

if TYPE_CHECKING:
    from ..events import Event
    from .inprocess import InProcess
    from .tasks import TaskState

__all__ = ["end", "run_step"]


async def run_step(backend: InProcess, task: TaskState) -> Event:
    """Advance ``task`` one stage; a pending task is taken off the queue on the first call."""
    if task.status == "pending" and not task.stepped:
        if not backend.queue.claim(task):
            raise RunStateError(
                f"task {task.id}'s session {task.session_id!r} is running another task; "
                "step it once that one is over"
            )
        task.stepped = True
        session = backend.begin(task)
        if backend.start(task, session) is None:  # its answer was there already
            backend.end(task, "done")
            backend.queue.release(task.session_id)
    run = task.run
    if not task.stepped or run is None or task.status in FINAL:
        raise RunStateError(
            f"task {task.id} is {task.status}: run_step drives a task that has not started "
            "(or one it started); the workers drive the others"
        )
    task.status = "running"
    try:
        event = await run.step()
    except Exception:
        end(backend, task)
        raise
    if run.done:
        end(backend, task)
    else:
        task.status = "paused"
        backend.rt.changed(task, write=False)
    return event


def end(backend: InProcess, task: TaskState) -> None:
    """Record the stepped run's end as the task's only attempt; free its session."""
    run = task.run
    assert run is not None and run.result is not None
    backend.attempted(task, run.result)
    backend.end(task, status_of(run.result))
    backend.queue.release(task.session_id)
