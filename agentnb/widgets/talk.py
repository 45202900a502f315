"""A conversation in the session view: the user's turns marked, its state, its controls.

* :func:`user_mark` - a user turn for its card: who played it (``rules``, ``model``,
  ``person``, ``recording``), the rule and why, what it did not understand, its slips;
  :func:`user_marks` finds every marked message of a session from its runs' annotations
  (what a late view or a saved notebook shows), :func:`panel` the user's side as it stands
  (goal, the facts it still holds back, patience, how it stopped, who plays it).
* :class:`ConversationDriver` - the view's controls bound to a
  :class:`~agentnb.evals.Conversation`: Run and Step drive it (the user's turn is a step like
  a stage), Stop cancels it, Take over gives the user's side to the person at the keyboard
  (the input box sends their message), Hand back returns it to the simulated user.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any

from ..evals.turns import ended, user_turn
from .controls import Driver

__all__ = ["ConversationDriver", "panel", "user_mark", "user_marks"]

#: The fields of a user turn a card shows.
_MARK = ("turn", "by", "rule", "why", "unread", "slips", "asked", "repeated", "done", "gave_up")


def user_mark(turn: Any) -> dict[str, Any]:
    """A user turn (a ``UserTurn`` or its dict) as its card's mark."""
    data = turn.to_dict() if hasattr(turn, "to_dict") else dict(turn)
    return {k: data[k] for k in _MARK if k in data}


def user_marks(session: Any) -> dict[int, dict[str, Any]]:
    """``index -> mark`` for every message a conversation's user said on ``session``: each
    run's input (its ``user`` annotation) and a closing message (the conversation's end)."""
    out: dict[int, dict[str, Any]] = {}
    for record in getattr(session, "runs", ()):
        turn = user_turn(record)
        if turn is not None and record.start is not None:
            out[record.start] = user_mark(turn)
        end = ended(record)
        if end is not None and end.closing is not None and end.closing.ends and record.end >= 0:
            out[record.end] = user_mark(end.closing)
    return out


def panel(
    user: Mapping[str, Any], turn: Any = None, stop: str | None = None, **more: Any
) -> dict[str, Any]:
    """The user's side for the view's strip: what plays it and its goal, the facts it still
    holds back and its patience after ``turn``, how the conversation stopped."""
    data = turn.to_dict() if hasattr(turn, "to_dict") else dict(turn or {})
    facts = {str(k): v if isinstance(v, str) else (next(iter(v)) if v else "")
             for k, v in (user.get("facts") or {}).items()}  # fmt: skip
    out = {
        "by": user.get("by", "rules"),
        "goal": user.get("goal", ""),
        "facts": facts,
        "seed": user.get("seed"),
        "max_patience": user.get("patience"),
        "max_turns": user.get("max_turns"),
        "held_back": list(data.get("held_back", list(facts))),
        "patience": data.get("patience", user.get("patience")),
        "turn": data.get("turn"),
        "stop": stop,
        "model": user.get("model"),
        "prompt": user.get("prompt"),
    }
    out.update(more)
    return out


def session_panel(session: Any) -> dict[str, Any] | None:
    """The strip of a session whose runs hold a conversation (a late view), else None."""
    last = None
    end = None
    for record in getattr(session, "runs", ()):
        turn = user_turn(record)
        last = turn if turn is not None else last
        end = ended(record) or end
    if last is None:
        return None
    closing = end.closing if end is not None and end.closing is not None else last
    user = end.user if end is not None else {}
    return panel(user, closing, end.stop_reason if end is not None else None)


class ConversationDriver(Driver):
    """The view's controls bound to a conversation (see the module docstring)."""

    def __init__(self, view: Any, conversation: Any) -> None:
        super().__init__(view, conversation.agent, conversation.session)
        self.conversation = conversation
        #: A person plays the user's side (as the clicks asked; the conversation follows once
        #: a step in progress has finished).
        self.person = conversation.person

    def current(self) -> Any:
        return self.conversation.run

    def command(self, op: str, text: str = "") -> None:
        if op in ("take_over", "hand_back"):  # after a step still running: clicks keep their order
            self.person = op == "take_over"  # what the clicks asked for, at once
            switch = getattr(self.conversation, op)
            if self.busy and self.task is not None and not self.task.done():
                self.task.add_done_callback(lambda _: self._switch(switch))
            else:
                self._switch(switch)
            return
        if op == "say":
            if not self.person:
                self.view.set_status(note="Take over first: the simulated user plays this side")
                return
            self._say(text)
            return
        super().command(op, text)

    def _switch(self, switch: Any) -> None:
        switch()
        self.view.set_talk(person=self.conversation.person)

    def _adopt(self, text: str, op: str) -> bool:
        run = self.current()
        if run is not None and run.driving:
            self.view.set_status(note=self._elsewhere(run, op))
            return False
        if self.conversation.done:
            self.view.set_status(note=f"the conversation is over ({self.conversation.stop_reason})")
            return False
        self.error = None
        self.view.set_status(note=None, error=None)
        return True

    def do_run(self, text: str = "") -> None:
        task = self.task
        if self.busy and task is not None and not task.done():  # a message or a step ends first
            task.add_done_callback(lambda _: self.do_run(text))
            return
        super().do_run(text)

    def do_stop(self, _text: str = "") -> None:
        self.conversation.cancel()
        self.view.recheck()

    def do_reset(self, _text: str = "") -> None:
        self.view.set_status(note="a conversation is not reset: start a new one")

    def _say(self, text: str) -> None:
        if not text.strip():
            self.view.set_status(note="an empty message is not sent: type the user's reply")
            return
        before = self.task if self.busy else None  # a step still finishing: say after it
        self.busy = True
        self.task = self._loop().create_task(self._drive_say(text, before))

    def _loop(self) -> Any:
        import asyncio

        return asyncio.get_running_loop()

    async def _drive_say(self, text: str, before: Any = None) -> None:
        async def say() -> None:
            if before is not None:
                await before
            self.busy = True
            await self.conversation.say(text)
            await self.conversation.until_user()

        await self._guarded(say())

    async def _drive(self, continuous: bool) -> None:
        talk = self.conversation

        async def steps() -> None:
            while not talk.done and not (talk.person and talk.run is None):
                await talk.step()
                self._report()
                if not continuous or self.pause_requested:
                    break

        await self._guarded(steps())

    async def _guarded(self, work: Coroutine[Any, Any, None]) -> None:
        """Drive ``work``; an error shows in the view (and stays in ``error``), and the view
        is told where the conversation stands whatever happened."""
        try:
            await work
        except Exception as exc:
            self.error = exc
            self.view.set_status(state="error", error=self.view.report(exc))
        finally:
            self.busy = False
            self._report()

    def _report(self) -> None:
        talk = self.conversation
        changes: dict[str, Any] = {"next": talk.next_stage}
        if talk.done:
            changes.update(state="stopped", reason=talk.stop_reason, detail=talk.end.detail)
        elif talk.person and talk.run is None:
            changes.update(state="paused", note="your turn: type the user's message")
        else:
            changes["state"] = "running" if self.busy else "paused"
        self.view.set_status(**changes)
