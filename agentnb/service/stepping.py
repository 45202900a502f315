"""Driving a task from outside, one stage per call (002 §3.1's ``run_step``).

The first ``run_step`` takes a pending task off the queue (the workers leave it alone from
then on), starts its run as a stepper and advances it one stage; between calls the task is
``paused``. Its run is the task's only attempt (no retries: whoever steps it decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import RunStateError
from .attempt import journal_hook, outcome_of
from .tasks import FINAL

if TYPE_CHECKING:
    from ..events import Event
    from .inprocess import InProcess
    from .tasks import Task

__all__ = ["end", "run_step"]


async def run_step(backend: InProcess, task: Task) -> Event:
    """Advance ``task`` one stage; a pending task is taken off the queue on the first call."""
    rt = backend.rt
    if task.status == "pending" and not task.stepped:
        if task.session_id in backend.queue.busy:
            raise RunStateError(
                f"task {task.id}'s session {task.session_id!r} is running another task; "
                "step it once that one is over"
            )
        backend.queue.take(task)
        backend.queue.busy.add(task.session_id)
        task.stepped = True
        backend._begin(task)
        task.attempt = 1
        session = rt.session(task.session_id)
        assert task.start_len is not None
        text = task.text if len(session) <= task.start_len else None
        run = rt.agent.start(text, session=session, task_id=task.id, trace_id=task.trace_id)
        run.state.sinks += [rt.progress(task), journal_hook(rt.agent, session, rt.log, task.id)]
        task.run = run
    if not task.stepped or task.run is None or task.status in FINAL:
        raise RunStateError(
            f"task {task.id} is {task.status}: run_step drives a task that has not started "
            "(or one it started); the workers drive the others"
        )
    task.status = "running"
    try:
        event = await task.run.step()
    except Exception:
        end(backend, task)
        raise
    if task.run.done:
        end(backend, task)
    else:
        task.status = "paused"
        rt.changed(task)
    return event


def end(backend: InProcess, task: Task) -> None:
    """Record the stepped run's end as the task's only attempt; free its session."""
    run = task.run
    assert run is not None
    outcome = outcome_of(run, run.result, run.state.error, [], [], 0.0)
    task.run = None
    task.status = "running"
    backend._attempted(task, outcome)
    backend._finish(task, outcome)
    backend.queue.release(task.session_id)
