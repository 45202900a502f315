"""SessionView: one widget per session that follows every append, edit and event live.

The list stays in Python. The browser gets each change as ONE small custom message carrying
``seq`` (the view's own counter: gaps show), sized by the message, never by the history.
Messages sent before a view renders are lost, so a compressed ``snapshot`` trait - refreshed
at most every ``refresh_every`` s, at the end of every run, and when a view asks - lets a
late view or a reloaded notebook catch up.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from typing import Any

import traitlets

from . import marks, payload, talk
from .approvals import Approver, Waiting
from .base import Widget
from .controls import Driver
from .inspectors import RequestInspector, diff_payload, request_payload
from .requests import RequestsSeen
from .sourcing import Sourcing

__all__ = ["SessionView"]


#: The widget of each session (the first made for it, while open): `session` in a cell shows it.
_VIEWS: weakref.WeakKeyDictionary[Any, SessionView] = weakref.WeakKeyDictionary()


class SessionView(Widget):
    """The live view of ``session``: cards by role, tool results under their calls.

    Args:
        session: the :class:`~agentnb.Session` to follow.
        agent: bind the Run / Step / Pause / Stop / Reset controls to this agent.
        height: pixel height of the scrolling transcript.
        refresh_every: minimum seconds between two snapshot refreshes during a run (more for
            a session whose snapshot is slow to build; 0 refreshes after every change).
        max_events: timeline rows kept for late views (the newest ones).
        approver: who decides the calls that wait for approval (Approve / Deny on the call;
            with ``agent=`` the controls do, see :mod:`.approvals`).
        conversation: bind the controls to an :class:`~agentnb.evals.Conversation` instead:
            Step steps the user's turn too, Take over / Hand back give the user's side to you
            (see :mod:`.talk`). A conversation's user turns are marked either way.
    """

    snapshot = traitlets.Bytes(b"").tag(sync=True)
    height = traitlets.Int(560).tag(sync=True)
    controls = traitlets.Bool(False).tag(sync=True)

    def __init__(
        self,
        session: Any,
        *,
        agent: Any = None,
        height: int = 560,
        refresh_every: float = 5.0,
        max_events: int = 2000,
        approver: Approver | None = None,
        conversation: Any = None,
    ) -> None:
        self.session = session
        self.refresh_every = refresh_every
        self.seq = 0
        self.sent_bytes = 0  # custom-message bytes, for the bench and the tests
        #: The timeline rows this view keeps (the newest ``max_events``), oldest first.
        self.timeline: deque[dict[str, Any]] = deque(maxlen=max_events)
        self._tools: dict[str, dict[str, Any]] = {}
        self._seen = RequestsSeen(session, agent)
        self._new_since = payload.new_since(session.wire(), session.requests)
        self._ground = marks.Grounding(session)
        self._sourcing = Sourcing(session)  # provenance: flags, steered calls
        self._dirty = False
        self._timer: asyncio.TimerHandle | None = None
        self._recheck_soon, self._cleared = False, 0  # a status check due; errors cleared
        self.driver: Driver | None = Driver(self, agent, session) if agent is not None else None
        if conversation is not None:
            self.driver = talk.ConversationDriver(self, conversation)
        self._said: dict[int, dict[str, Any]] = {}  # user turns announced live, by index
        self._talk = talk.session_panel(session)
        if conversation is not None:
            self._talk = {**(self._talk or talk.panel(conversation.user.describe())),
                          "person": conversation.person, "driven": True}  # fmt: skip
        self.waiting = Waiting(self, approver or self.driver)  # calls awaiting approval
        self._status: dict[str, Any] = {
            **marks.last_stop(session),
            **marks.live_status(session, self.driver),
        }
        self._last_refresh = time.monotonic()
        first = payload.pack(self.state())
        self._cost = time.monotonic() - self._last_refresh  # opened with the comm: no second send
        bound = agent is not None or conversation is not None
        super().__init__(kind="session", height=height, controls=bound, snapshot=first)
        self._unsubscribe = session.subscribe(self._on_event)
        if session not in _VIEWS:
            _VIEWS[session] = self

    @classmethod
    def of_conversation(cls, conversation: Any) -> SessionView:
        """The open view of a conversation's session, its controls bound to it."""
        view = _VIEWS.get(conversation.session)
        if (
            view is None
            or view.comm is None
            or getattr(view.driver, "conversation", None) is not conversation
        ):
            view = _VIEWS[conversation.session] = cls(
                conversation.session, conversation=conversation
            )
        return view

    @classmethod
    def of(cls, session: Any) -> SessionView:
        """The open view of ``session`` (made on first use)."""
        view = _VIEWS.get(session)
        if view is None or view.comm is None:
            view = _VIEWS[session] = cls(session)
        return view

    # -- state for late views ------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything a fresh view needs (what the snapshot trait holds, uncompressed)."""
        s = self.session
        wires = s.wire()
        its = payload.iterations(len(wires), wires, s.runs)
        edited = marks.edit_marks(s)
        said = {**talk.user_marks(s), **self._said}
        msgs = [payload.message(m, its[i], edited.get(id(m)), said.get(i))
                for i, m in enumerate(s.messages)]  # fmt: skip
        for m, pv in zip(msgs, self._sourcing.marks(), strict=True):
            if pv is not None:
                m["pv"] = pv
        return {
            "seq": self.seq,
            "session": s.id,
            "messages": msgs,
            "events": list(self.timeline),
            "tools": self._tools,
            "context": self._seen.context,
            "status": self._status,
            "new_since": self._new_since,
            "calls": len(s.requests),
            "ground": self._ground.now(),
            "waiting": self.waiting.payload(),
            "talk": self._talk,
        }

    def refresh(self) -> None:
        """Send the snapshot now (the end of a run, a view that fell behind, a repair)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._dirty = False
        started = self._last_refresh = time.monotonic()
        blob = payload.pack(self.state())
        self._cost = time.monotonic() - started  # a big session refreshes less often
        if blob == self.snapshot:
            self.send_state("snapshot")  # a view asked: send it even if unchanged
        else:
            self.snapshot = blob

    def _touch(self) -> None:
        """Refresh throttled: at once if the last refresh is old enough, else later."""
        every = self.refresh_every and max(self.refresh_every, 20 * self._cost)  # <= ~5% of time
        wait = every - (time.monotonic() - self._last_refresh)
        if wait <= 0:
            self.refresh()
            return
        self._dirty = True
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop (a script): the next run end or refresh() sends it
            self._timer = loop.call_later(wait, self._late_refresh)

    def _late_refresh(self) -> None:
        self._timer = None
        if self._dirty:
            self.refresh()

    # -- live updates -------------------------------------------------------------------
    def _post(self, msg: dict[str, Any]) -> None:
        self.seq += 1
        msg["seq"] = self.seq
        msg, size = payload.sendable(msg)
        self.sent_bytes += size
        self.send(msg)
        self._touch()

    def _on_event(self, event: Any) -> None:
        kind = event.type
        msg: dict[str, Any]
        if kind == "MessageAppended":
            it = event.iteration if event.run_id is not None else None
            said = self._said.get(event.index)
            m = payload.message(event.message, it, None, said)
            msg = {"op": "append", "index": event.index, "m": m}
            pv = self._sourcing.add(event.index, event.message.wire())
            if pv is not None:
                m["pv"] = pv
            row = payload.event_row(event)  # a timeline row; the browser rebuilds it from these
            self.timeline.append(row)
            msg.update(st=event.stage, t=round(event.time, 4))
            if event.run_id is not None:
                msg["run"] = event.run_id
            else:  # an append by hand: its row says so
                row["summary"] = f"+ #{event.index} {event.message.role} (appended by hand)"
        elif kind == "UserReplied":  # a conversation's user: its card's mark, its strip
            row = payload.event_row(event)
            self.timeline.append(row)
            if event.index >= 0:
                self._said[event.index] = talk.user_mark(event.turn)
            stop = None
            if event.turn.get("done") or event.turn.get("gave_up"):
                stop = "user_done" if event.turn.get("done") else "user_gave_up"
            keep = {k: (self._talk or {}).get(k) for k in ("person", "driven")}
            self._talk = talk.panel(event.user, event.turn, stop, **keep)
            msg = {"op": "event", "e": row, "talk": self._talk}
        elif kind == "SessionEdited":
            self._sourcing.reset()  # traced again from the start (the next append catches up)
            self._new_since = min(self._new_since, event.index)
            msg = marks.edit_message(self.session, event)
            self.timeline.append(msg["e"])
        else:
            row = payload.event_row(event)
            msg = {"op": "event", "e": row}
            self._observe(event, row, msg)
            if kind != "ModelDelta":
                self.timeline.append(row)
        msg["eseq"] = event.seq
        if self.waiting.observe(event):
            msg["waiting"] = self.waiting.payload()
        if self._ground.after(event):
            msg["ground"] = self._ground.value
        self._post(msg)
        if kind == "RunStopped" or msg["op"] == "reset":
            self.refresh()
        if event.run_id is not None:
            self._schedule_recheck()

    # -- the status line: what the run is doing, whoever drives it -------------------------
    def _schedule_recheck(self) -> None:
        """After the step in progress returns (a stepper pauses there), read the hold again."""
        if self._recheck_soon:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._recheck_soon = True
        loop.call_soon(self.recheck)

    def recheck(self) -> None:
        """Bring the status line in line with the session's hold (running, paused, next)."""
        self._recheck_soon = False
        live = marks.live_status(self.session, self.driver)
        changed = {k: v for k, v in live.items() if self._status.get(k) != v}
        if changed:
            self.set_status(**changed)

    def clear_errors(self) -> None:
        """Take the errors off the view (the next action succeeded); ``errors`` keeps them."""
        if len(self.errors) > self._cleared:
            self._cleared = len(self.errors)
            self._post({"op": "clear_errors"})

    def _observe(self, event: Any, row: dict[str, Any], msg: dict[str, Any]) -> None:
        """Keep the status line, tool outcomes, budgets and the request context current."""
        kind = event.type
        status = dict(self._status)
        status.update(marks.live_status(self.session, self.driver))
        status.update(stage=event.stage, iteration=event.iteration, run=event.run_id)
        if kind == "RunStarted":
            status.update(state="running", reason=None, detail="", error=None)
        elif kind == "RunStopped":
            status.update(state="stopped", reason=event.reason, detail=event.detail)
        elif kind == "ToolFinished":
            stat = self._tools[event.call_id] = payload.tool_stat(event, self.session)
            if "sub" in stat:
                msg["sub"] = stat["sub"]
        elif kind == "RequestAssembled":
            self._new_since = len(self.session)
            msg["new_since"] = self._new_since
            msg["calls"] = len(self.session.requests)  # recorded by assemble, with its budget
            ctx = self._seen.assembled(event)
            if ctx is not None:
                msg["context"] = ctx
        changed = {k: v for k, v in status.items() if self._status.get(k, None) != v}
        if changed:  # only what changed: the browser merges it
            self._status = status
            msg["status"] = changed

    def send_waiting(self) -> None:
        """Tell the browser which calls wait for approval now."""
        self._post({"op": "waiting", "waiting": self.waiting.payload()})

    def set_talk(self, **changes: Any) -> None:
        """Change the conversation strip (the controls: taken over, handed back)."""
        self._talk = {**(self._talk or {}), **changes}
        self._post({"op": "talk", "talk": self._talk})

    def set_status(self, **changes: Any) -> None:
        """Change the status line (used by the controls) and tell the browser."""
        self._status = {**self._status, **changes}
        self._post({"op": "status", "status": changes})

    # -- messages from the browser --------------------------------------------------------
    def _on_msg(self, content: dict[str, Any]) -> Any:
        op = content.get("op")
        if op in ("hello", "sync"):  # a view that (re)rendered, or one that lost a message
            if op == "sync" or int(content.get("seq", -1)) < self.seq:
                self.refresh()
            return None
        if op in ("approve", "deny"):  # a click on a waiting call
            return self.waiting.decide(content)
        if op in ("run", "step", "pause", "stop", "reset", "take_over", "hand_back", "say"):
            if self.driver is None:
                raise RuntimeError("this view has no agent: use session.view(agent=agent)")
            self.driver.command(op, str(content.get("text") or ""))
            self.clear_errors()  # the action succeeded: an earlier error no longer applies
            return None
        if op == "get":
            if content.get("what") == "request":
                return request_payload(self.session, int(content["k"]), view=self)
            if content.get("what") == "diff":
                return diff_payload(self.session, int(content["j"]), int(content["k"]))
        raise ValueError(f"unknown message from the view: {content!r}")

    # -- Python API -------------------------------------------------------------------------
    @property
    def status(self) -> dict[str, Any]:
        """The status line: state, stage, iteration, stop reason, error."""
        return dict(self._status)

    def trace(self) -> Any:
        """The timeline rows this view kept, as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(list(self.timeline))

    def inspect(self, k: int = -1) -> Any:
        """A :class:`RequestInspector` on model call ``k`` (1-based; -1 is the latest)."""
        return RequestInspector(self.session, k, view=self)

    def close(self) -> None:
        unsubscribe = getattr(self, "_unsubscribe", None)
        if unsubscribe is not None:
            unsubscribe()
        if getattr(self, "_timer", None) is not None:
            self._timer.cancel()  # type: ignore[union-attr]
        session = getattr(self, "session", None)
        if session is not None and _VIEWS.get(session) is self:
            del _VIEWS[session]
        super().close()

    def subject(self) -> Any:
        return self.session

    def __repr__(self) -> str:
        return f"<SessionView of {self.session!r}>"
