"""The run controls: Run, Step, Pause, Stop and Reset, bound to an agent and a session.

The kernel does not deliver widget clicks while a cell is busy, so a run started from the
view is a background task on the kernel's running loop (``asyncio.ensure_future``): the
buttons keep working while it runs. The task drives the stepper, ``run.step()`` after
``run.step()``, so Pause is simply "stop stepping between stages" and Step is one more.

- **Run**: start a run with the input box's text (or resume a paused one) and step to the end.
- **Step**: one stage (starting a run first if there is none); while running, pause instead.
- **Pause**: stop after the stage in progress; the run waits, paused, for Step or Run.
- **Stop**: ``run.cancel()``; open tool calls are answered "cancelled", the session stays valid.
- **Reset**: stop, then truncate the session back to the length it had when the view was made.

An exception from a run is shown in the view and kept in ``driver.error``, never swallowed.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["Driver"]


class Driver:
    """Drives runs of ``agent`` on ``session`` for a view (see the module docstring)."""

    def __init__(self, view: Any, agent: Any, session: Any) -> None:
        self.view = view
        self.agent = agent
        self.session = session
        self.base = len(session)  # Reset returns the session to this length
        self.run: Any = None
        self.task: asyncio.Future[Any] | None = None
        self.paused = False
        self.driving = False
        self.error: BaseException | None = None

    # -- state --------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.driving

    def current(self) -> Any:
        """The run to stop: the one this view started, or any run active on the session."""
        if self.run is not None and not self.run.done:
            return self.run
        return getattr(self.session, "active_run", None)

    def status(self) -> dict[str, Any]:
        run = self.run
        state: dict[str, Any] = {
            "max_iterations": getattr(self.agent, "max_iterations", None),
            "next": None if run is None else run.next_stage,
        }
        if run is not None and not run.done and not self.busy:
            state["state"] = "paused"
        return state

    # -- commands -----------------------------------------------------------------------
    def command(self, op: str, text: str = "") -> None:
        """Handle a button: ``run``, ``step``, ``pause``, ``stop`` or ``reset``."""
        getattr(self, "do_" + op)(text)

    def do_run(self, text: str = "") -> None:
        if self.busy:
            self.paused = False  # a Step in progress becomes a run to the end
            return
        self._ensure_run(text)
        self.paused = False
        self._spawn(continuous=True)

    def do_step(self, text: str = "") -> None:
        if self.busy:
            self.paused = True  # running: stop after this stage
            return
        self._ensure_run(text)
        self._spawn(continuous=False)

    def do_pause(self, _text: str = "") -> None:
        self.paused = True
        if self.busy:
            self.view.set_status(state="pausing")

    def do_stop(self, _text: str = "") -> None:
        run = self.current()
        if run is None:
            self.view.set_status(note="nothing to stop")
            return
        run.cancel()
        self._report()

    def do_reset(self, _text: str = "") -> None:
        run = self.current()
        if run is not None:
            run.cancel()
        self.run = None
        self.paused = False
        self.error = None
        if len(self.session) > self.base:
            self.session.truncate(self.base)
        self.view.set_status(state="idle", stage=None, iteration=0, reason=None, error=None)
        self.view.refresh()

    # -- the background task ----------------------------------------------------------------
    def _ensure_run(self, text: str) -> None:
        if self.run is None or self.run.done:
            self.error = None
            self.run = self.agent.start(text or None, session=self.session)

    def _spawn(self, *, continuous: bool) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "the controls need a running event loop: use them in a Jupyter kernel, or "
                "drive the run yourself with `await run.step()`"
            ) from None
        self.driving = True
        self.task = loop.create_task(self._drive(continuous))

    async def _drive(self, continuous: bool) -> None:
        run = self.run
        try:
            while not run.done:
                await run.step()
                self._report()
                if not continuous or self.paused:
                    break
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.error = exc
            text = self.view.report(exc)
            self.view.set_status(state="error", error=text)
        finally:
            self.driving = False
            self._report()

    def _report(self) -> None:
        run = self.run
        if run is None:
            return
        changes: dict[str, Any] = {"next": run.next_stage, "iteration": run.iteration}
        if run.done:
            changes.update(state="stopped", reason=run.stop_reason, detail=run.stop_detail)
        else:
            changes["state"] = "running" if self.busy else "paused"
        self.view.set_status(**changes)
