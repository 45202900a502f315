"""Marks the view puts on messages: hand edits, ungrounded figures, the run's live status.

- :func:`edit_mark` (:mod:`.payload`'s) - what a hand edit changed (``session.edits``), for the
  card, the raw JSON, the diff and the timeline; :func:`edit_marks` finds the edited messages
  of a session.
- :func:`grounding` - the figures of the final answer that appear in no tool result
  (:func:`agentnb.testing.ungrounded_figures`), counted in the header and marked in the card.
- :func:`live_status` - running / pausing / paused (with the next stage) read from the
  session's hold, whoever started the run: code, a cell, or the view's own buttons.
"""

from __future__ import annotations

from typing import Any

from ..testing import ungrounded_figures
from . import payload
from .payload import edit_mark

__all__ = [
    "Grounding",
    "edit_mark",
    "edit_marks",
    "edit_message",
    "grounding",
    "last_stop",
    "live_status",
]


def edit_marks(session: Any) -> dict[int, Any]:
    """``id(message) -> EditRecord`` for every message a hand edit put in ``session``.

    Also keyed by ``id(message.wire())``, so requests (which share the wire dicts) can be
    matched too. The latest edit of a message wins.
    """
    out: dict[int, Any] = {}
    for record in getattr(session, "edits", ()):
        message = record.message
        if message is not None:
            out[id(message)] = out[id(message.wire())] = record
    return out


def edit_message(session: Any, event: Any) -> dict[str, Any]:
    """The browser message for a ``SessionEdited`` event, with its timeline row as ``e``."""
    action, index = event.action, event.index
    record = event if getattr(event, "how", "") else None  # it carries a copy of the record
    row = payload.event_row(event)
    msg: dict[str, Any]
    if action == "replace":
        m = session.messages[index]
        its = payload.iterations(len(session), session.wire(), session.runs)
        msg = {"op": "replace", "index": index, "m": payload.message(m, its[index], record)}
    elif action == "delete":
        msg = {"op": "delete", "index": index}
    elif action == "truncate":
        msg = {"op": "truncate", "length": index}
    else:
        msg = {"op": "reset"}  # repair and anything new: the snapshot carries it
    msg["e"] = row
    return msg


def grounding(session: Any) -> dict[str, Any] | None:
    """``{"i": index, "figures": [...]}`` when the session ends in a final answer, else None."""
    messages = session.messages
    if not messages:
        return None
    last = messages[-1]
    if last.role != "assistant" or getattr(last, "tool_calls", None) or not last.text.strip():
        return None
    return {"i": len(messages) - 1, "figures": ungrounded_figures(session)}


class Grounding:
    """A view's grounding mark, kept current cheaply: :func:`grounding` reads the whole
    session, so it runs at a run's end, after an edit, or on an append after the answer; an
    answer appended by hand is checked when the next snapshot is built (:meth:`now`)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.value = grounding(session)
        self.due = False

    def after(self, event: Any) -> bool:
        """Update for ``event``; True when the mark changed (the browser must hear it)."""
        kind = event.type
        appended = kind == "MessageAppended"
        if kind in ("SessionEdited", "RunStopped") or (appended and self.value is not None):
            self.due = False
            value = grounding(self.session)
            changed, self.value = value != self.value, value
            return changed
        if appended and event.run_id is None:
            self.due = True
        return False

    def now(self) -> dict[str, Any] | None:
        if self.due:
            self.value, self.due = grounding(self.session), False
        return self.value


def live_status(session: Any, driver: Any = None) -> dict[str, Any]:
    """The run state from the session's hold (or the run the view made, not yet holding).

    ``running`` while a stage executes, ``pausing`` when the view asked to pause after it,
    ``paused`` between steps; always with the stage the next step runs. ``{}`` when no run
    is in progress (the last ``RunStopped`` then says how it ended).
    """
    run = session.active_run
    own = getattr(driver, "run", None)
    if run is None and own is not None and not own.done:
        run = own
    if run is None or getattr(run, "done", False):
        return {}
    status: dict[str, Any] = {"next": run.next_stage, "run": run.id, "stage": run.stage}
    if getattr(run, "iteration", None) is not None:
        status["iteration"] = run.iteration
    agent = getattr(run, "agent", None)
    if agent is not None:
        status["max_iterations"] = agent.max_iterations
    if run.driving:
        ours = driver is not None and driver.busy and driver.run is run
        pausing = ours and driver.pause_requested
        status["state"] = "pausing" if pausing else "running"
    else:
        status["state"] = "paused"
    return status


def last_stop(session: Any) -> dict[str, Any]:
    """How the session's last run ended (its record), else idle: a view opened after the runs
    (a proxied session's calls) says how the last one stopped."""
    runs = getattr(session, "runs", None)
    last = runs[-1] if runs else None
    if last is None or last.stop_reason is None:
        return {"state": "idle"}
    return {"state": "stopped", "reason": last.stop_reason, "detail": last.detail}
