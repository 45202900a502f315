"""The run controls: Run, Step, Pause, Stop and Reset, bound to an agent and a session.

The kernel does not deliver widget clicks while a cell is busy, so a run driven from the
view is a background task on the kernel's running loop (``asyncio.ensure_future``): the
buttons keep working while it runs. The task drives the stepper, ``run.step()`` after
``run.step()``, so Pause is simply "stop stepping between stages" and Step is one more.

One driver, whoever started the run: the buttons act on the run holding the session
(``session.active_run``, the lock's hold), so a run stepped from code (``await run.step()``)
and paused there is continued, stepped or stopped from the view just like one the view made.

- **Run**: continue the paused run (or start one with the input box's text) to the end.
- **Step**: one stage (starting a run first if there is none); while running, pause instead.
- **Pause**: stop after the stage in progress; the run waits, paused, for Step or Run.
- **Stop**: ``run.cancel()``; open tool calls are answered "cancelled", the session stays valid.
- **Reset**: stop, then truncate the session back to the length it had when the view was made.

A run driven elsewhere at that moment (``await run.finish()`` in a cell) is not driven twice:
Run and Step say so in the status line, Stop still reaches it. An exception from a run is
shown in the view and kept in ``driver.error``, never swallowed; the next action that
succeeds clears it from the view.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..runtime.guard import Approvals

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
        #: The user asked to pause: the view's task stops after the current stage. Whether a
        #: run *is* paused is the session lock's hold (``run.driving``); this is only the wish.
        self.pause_requested = False
        #: True while this view's own task drives a run.
        self.busy = False
        self.error: BaseException | None = None
        #: The calls this view's runs wait on (Approve / Deny decide them; see .approvals).
        self.gate = Approvals()

    # -- state --------------------------------------------------------------------------
    def current(self) -> Any:
        """The run the buttons act on: the one holding the session (whoever started it), or
        the one this view made that has not taken the session yet."""
        run = self.session.active_run
        if run is not None:
            return run
        if self.run is not None and not self.run.done:
            return self.run
        return None

    # -- commands -----------------------------------------------------------------------
    def command(self, op: str, text: str = "") -> None:
        """Handle a button: ``run``, ``step``, ``pause``, ``stop`` or ``reset``."""
        getattr(self, "do_" + op)(text)

    def do_run(self, text: str = "") -> None:
        if self.busy:
            self.pause_requested = False  # a Step in progress becomes a run to the end
            self.view.recheck()
            return
        if self._adopt(text, "run"):
            self.pause_requested = False
            self._spawn(continuous=True)

    def do_step(self, text: str = "") -> None:
        if self.busy:
            self.pause_requested = True  # running: stop after this stage
            self.view.recheck()
            return
        if self._adopt(text, "step"):
            self._spawn(continuous=False)

    def do_pause(self, _text: str = "") -> None:
        self.pause_requested = True
        run = self.current()
        if not self.busy and run is not None and run.driving:
            self.view.set_status(note=self._elsewhere(run, "pause"))
        self.view.recheck()

    def do_stop(self, _text: str = "") -> None:
        run = self.current()
        if run is None:
            self.view.set_status(note="nothing to stop")
            return
        run.cancel()
        self.view.recheck()

    def do_reset(self, _text: str = "") -> None:
        run = self.current()
        if run is not None:
            run.cancel()
        self.run = None
        self.pause_requested = False
        self.error = None
        if len(self.session) > self.base:
            self.session.truncate(self.base)
        self.view.set_status(state="idle", stage=None, iteration=0, reason=None, error=None,
                             next=None, note=None)  # fmt: skip
        self.view.refresh()

    # -- approvals (the view's approver) ------------------------------------------------------
    def pending(self, session: Any) -> list[dict[str, Any]]:
        gate = self.gate
        return [
            {
                "call_id": r.call_id,
                "tool": r.name,
                "arguments": r.arguments,
                "digest": r.digest,
                "expires": gate.expires(r),
            }
            for r in gate.pending.values()
        ]

    def decide(self, session: Any, call_id: str, verdict: str, digest: str, reason: str) -> None:
        """Approve or deny a waiting call; once none waits, the run resumes the round."""
        if verdict == "approved":
            self.gate.approve(call_id, digest=digest)
        else:
            self.gate.deny(call_id, reason, digest=digest)
        if not self.gate.pending:
            self.do_run("")

    # -- the background task ----------------------------------------------------------------
    def _adopt(self, text: str, op: str) -> bool:
        """Make ``self.run`` the run to drive: the one holding the session, else a new one.
        False (with a note) when another task is driving it right now."""
        run = self.current()
        if run is not None and run.driving:
            self.view.set_status(note=self._elsewhere(run, op))
            return False
        if run is None:
            run = self.agent.start(text or None, session=self.session, guard=self.gate)
        self.run = run
        self.error = None
        self.view.set_status(note=None, error=None)
        return True

    @staticmethod
    def _elsewhere(run: Any, op: str) -> str:
        return (
            f"run {run.id} is being driven elsewhere (a cell awaiting it): {op} waits until "
            "it pauses; Stop reaches it now"
        )

    def _spawn(self, *, continuous: bool) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "the controls need a running event loop: use them in a Jupyter kernel, or "
                "drive the run yourself with `await run.step()`"
            ) from None
        self.busy = True
        self.task = loop.create_task(self._drive(continuous))

    async def _drive(self, continuous: bool) -> None:
        run = self.run
        try:
            while not run.done:
                await run.step()
                self._report()
                if not continuous or self.pause_requested:
                    break
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.error = exc
            text = self.view.report(exc)
            self.view.set_status(state="error", error=text)
        finally:
            self.busy = False
            self._report()

    def _report(self) -> None:
        run = self.run
        if run is None:
            return
        changes: dict[str, Any] = {"next": run.next_stage, "iteration": run.iteration}
        if run.done:
            if self.error is None:
                changes.update(state="stopped", reason=run.stop_reason, detail=run.stop_detail)
        else:
            changes["state"] = "running" if self.busy else "paused"
        self.view.set_status(**changes)
