"""Conversation: an agent and a user, turn by turn, on one session; the user's turn a stage.

    conversation = an.evals.Conversation(agent, an.User(goal, facts), "上海到北京的航班")
    await conversation.finish()        # -> Turns: the user's turns, the answers, the stop
    event = await conversation.step()  # one stage: the user's turn (a UserTurn), or a run's
    conversation.take_over(); await conversation.say("改成周六"); conversation.hand_back()

Each agent turn is an ordinary run (``agent.start``, or the ``start`` given) tagged with its
``turn``, the user's turn that started it on its record (``annotations["user"]``), and how the
conversation ended on the last (``annotations["conversation"]``; :mod:`.turns` reads them).

:meth:`Conversation.step` steps the user's turn like a stage: it reads the agent's last
answer, decides the reply (the user's rules, its model, a person's text, or a recording),
announces it (:class:`~agentnb.evals.user.UserReplied`, stage ``"user"``), and starts the next
run with it through ``restore``, so its message is in the session when the step returns. A
turn that ends the conversation (done, gave up) is appended as the closing message, and the
conversation stops: ``user_done``, ``user_gave_up``, or ``max_turns`` once the agent has had
``user.max_turns`` turns (the reply the limit cut off is recorded, never sent).

**Replay.** Given ``recorded`` turns (an evaluation gives those of the run a replaying agent
replays), the user is never asked: turn *k* is the recorded one, served only to the answer
it was recorded after. An agent that answers otherwise stops the conversation on that turn
with ``mismatch`` (``exhausted``: the recording ended sooner; ``not_recorded``: it holds
none), the detail naming the turn.

**A person.** ``take_over()`` gives the user's side to a person: the next user turn is what
:meth:`say` is given (a ``"person"`` turn); ``hand_back()`` returns it to the simulated user,
which reads the conversation as it stands (the facts the person gave count as given).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import display
from ..display import Shown
from ..errors import RunStateError
from ..events import Origin
from ..messages import UserMessage
from ..session import Session
from .turns import CONVERSATION, USER, Ended, Turns, note, turns_of
from .user.reading import mentions
from .user.slips import draw
from .user.turn import UserReplied, UserTurn, digest
from .user.user import User

if TYPE_CHECKING:
    from ..agent import Agent
    from ..runtime import Run

__all__ = ["Conversation", "Start", "conversation"]

#: How a turn is started: ``start(agent, text, tags)`` (a run not yet driven).
Start = Callable[["Agent", str, dict[str, str]], "Run"]


class Conversation(Shown):
    """An agent and a :class:`~agentnb.evals.User` on one session (see the module docstring).
    In a notebook it shows its session's live view, the controls bound to it (Step steps the
    user's turn too; Take over / Hand back); ``view()`` makes one.

    Args:
        agent: the agent whose turns are runs.
        user: the simulated user (``an.User``).
        opening: the user's first message (the task's input); default: its goal.
        session: the session to talk on (a new one by default).
        tags: the tags of every run (an evaluation's row); each run adds its ``turn``.
        recorded: the user's turns to replay instead of asking the user (see the module
            docstring); None: the user plays.
        start: how each turn's run is started, ``start(agent, text, tags)`` (default
            ``agent.start`` on ``session``; a sweep on the service gives its attempt's).
    """

    def __init__(
        self,
        agent: Agent,
        user: User,
        opening: str | None = None,
        *,
        session: Session | None = None,
        tags: Mapping[str, str] | None = None,
        recorded: Sequence[UserTurn] | None = None,
        start: Start | None = None,
    ) -> None:
        self.agent, self.user, self._start = agent, user, start
        self.session = session if session is not None else Session()
        self.opening = opening if opening is not None else user.goal
        self.tags = dict(tags or {})
        self.recorded = None if recorded is None else list(recorded)
        #: The user's turns so far (the opening first), and the agent's turns (runs).
        self.turns: list[UserTurn] = []
        self.runs: list[Run] = []
        #: True while a person plays the user's side (:meth:`take_over`).
        self.person = False
        self.end: Ended | None = None

    # -- state ----------------------------------------------------------------------------------
    @property
    def run(self) -> Run | None:
        """The agent's turn in progress (None between turns)."""
        run = self.runs[-1] if self.runs else None
        return run if run is not None and not run.done else None

    done = property(lambda self: self.end is not None)

    @property
    def next_stage(self) -> str | None:
        """What :meth:`step` does next: ``"user"``, a run's stage, or None once it ended."""
        if self.end is not None:
            return None
        run = self.run
        return run.next_stage if run is not None else "user"

    stop_reason = property(lambda self: self.end.stop_reason if self.end is not None else None)
    answers = property(lambda self: [r.output or "" for r in self.runs])

    def result(self) -> Turns:
        """The conversation so far, read back from its runs."""
        found = turns_of(self.session, self.runs[-1].record) if self.runs else None
        return found if found is not None else Turns(self.session, [], list(self.turns), self.end)

    # -- driving --------------------------------------------------------------------------------
    async def step(self) -> Any:
        """One stage: the user's turn (returns its :class:`UserTurn`) or the next stage of
        the agent's run (returns its event)."""
        if self.end is not None:
            raise RunStateError(f"the conversation is over ({self.end.stop_reason})")
        run = self.run
        if run is None:
            if self.person:
                raise RunStateError(
                    "the user's side is taken over: conversation.say(text) gives the next user "
                    "message, conversation.hand_back() returns it to the simulated user"
                )
            return await self._user_turn(None)
        try:
            event = await run.step()
        except BaseException as exc:
            self._stop("cancelled" if run.stop_reason == "cancelled" else "error", repr(exc))
            raise
        if run.done and run.stop_reason in ("cancelled", "error"):
            self._stop(run.stop_reason, run.stop_detail)
        return event

    async def finish(self) -> Turns:
        """Step to the end (a person's side taken over stops at its turn: :meth:`say`)."""
        while True:
            if self.end is not None or (self.run is None and self.person):
                return self.result()
            await self.step()

    def __await__(self) -> Any:
        return self.finish().__await__()

    async def until_user(self) -> Any:
        """Step until the user's turn is next (the agent's answer is in), or the end."""
        while self.end is None and self.run is not None:
            await self.step()
        return self.result()

    def cancel(self) -> None:
        """Stop: cancel the agent's run in progress, and end the conversation (``cancelled``)."""
        run = self.run
        if run is not None:
            run.cancel()
        if self.end is None:
            self._stop("cancelled", "conversation.cancel() was called")

    # -- a person at the user's side ------------------------------------------------------------
    def take_over(self) -> None:
        """A person plays the user's side from the next user turn: :meth:`say` gives it."""
        self.person = True

    def hand_back(self) -> None:
        """The simulated user plays again from the next user turn."""
        self.person = False

    async def say(self, text: str) -> UserTurn:
        """The next user turn is ``text``, typed by a person (the agent's turn in progress is
        finished first); the agent's run with it starts, as a user step does."""
        if self.end is not None:
            raise RunStateError(f"the conversation is over ({self.end.stop_reason})")
        await self.until_user()
        if self.end is not None:
            raise RunStateError(f"the conversation is over ({self.end.stop_reason})")
        return await self._user_turn(text)

    # -- the user's stage -------------------------------------------------------------------------
    async def _user_turn(self, typed: str | None) -> UserTurn:
        k = len(self.turns)
        if typed is not None:
            turn = self._person(typed, k)
        elif self.recorded is not None:
            found = self._replayed(k)
            if found is None:
                return self.turns[-1] if self.turns else UserTurn(k, "", "recording")
            turn = found
        elif k == 0:
            turn = self.user.opening(self.opening)
        else:
            turn = await self.user.reply(self.answers, self.turns)
        self.turns.append(turn)
        index = len(self.session)
        limit = k >= 1 and len(self.runs) >= self.user.max_turns and not turn.ends
        self._announce(turn, -1 if limit else index)
        if turn.ends:
            self.session.append(UserMessage(content=turn.text))
            self._stop("user_done" if turn.done else "user_gave_up", turn.why, closing=turn)
        elif limit:
            self._stop("max_turns", f"the agent had its {self.user.max_turns} turns; the "
                       "user's next reply was not sent", closing=turn)  # fmt: skip
        else:
            tags = {**self.tags, "turn": str(len(self.runs))}
            if self._start is not None:
                run = self._start(self.agent, turn.text, tags)
            else:
                run = self.agent.start(turn.text, session=self.session, tags=tags)
            note(run.record, USER, turn)
            self.runs.append(run)
            await self.step()  # restore: the user's message lands
        return turn

    def _person(self, text: str, k: int) -> UserTurn:
        """A turn a person typed: the facts it names count as given."""
        facts = self.user.facts_at(k)
        gave = {key: text for key, value in facts.items() if mentions(text, value)}
        before = {key for t in self.turns for key in t.gave} | set(gave)
        held = tuple(key for key in facts if key not in before)
        patience = self.turns[-1].patience if self.turns else self.user.patience
        answer = self.answers[-1] if self.answers and k else ""
        return UserTurn(k, text, "person", "person", "typed by a person (take_over)",
                        gave=gave, held_back=held, patience=patience,
                        replied_to=digest(answer))  # fmt: skip

    def _replayed(self, k: int) -> UserTurn | None:
        """The recorded turn ``k``, to the same answer only; None after stopping with the
        replay's miss."""
        recorded = self.recorded or []
        if not recorded:
            self._stop("not_recorded", f"turn {k}: the recording holds no user turns for this "
                       "conversation (a user is never regenerated in a replay)")  # fmt: skip
            return None
        if k >= len(recorded):
            self._stop("exhausted", f"turn {k}: the recorded conversation ended after "
                       f"{len(recorded)} user turns")  # fmt: skip
            return None
        turn = recorded[k]
        if k and turn.replied_to and turn.replied_to != digest(self.answers[-1]):
            said = self.answers[-1].replace("\n", " ")[:80]
            self._stop(
                "mismatch",
                f"turn {k}: the agent answered {said!r}, not the answer the recorded user "
                f"replied to; its reply {turn.text!r} was not given",
            )
            return None
        fields = turn.to_dict()
        fields.update(by="recording", why=f"replayed ({turn.by}: {turn.why})")
        return UserTurn.from_dict(fields)

    def _announce(self, turn: UserTurn, index: int) -> None:
        """``UserReplied`` on the session's bus (the view marks the message by it)."""
        origin = Origin.now(self.session.id, None, None)
        fields = {"turn": turn.to_dict(), "index": index, "user": self.user.describe()}
        self.session.bus.emit(UserReplied, origin, "user", len(self.runs), time.monotonic(), fields)

    def _stop(self, reason: str, detail: str, closing: UserTurn | None = None) -> None:
        if self.end is not None:
            return
        self.end = Ended(reason, detail, len(self.runs), closing, self.user.describe())
        if self.runs:
            note(self.runs[-1].record, CONVERSATION, self.end)

    def view(self, **options: Any) -> Any:
        """The live view of the conversation (``agentnb.widgets.SessionView``, its controls
        bound to it; needs ipywidgets)."""
        return display.view(self, **options)

    def static_bundle(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """Its session's messages (nbviewer, GitHub)."""
        return self.session.static_bundle(include=include, exclude=exclude)

    def __repr__(self) -> str:
        state = f"stopped: {self.end.stop_reason}" if self.end else f"next: {self.next_stage}"
        who = "a person" if self.person else self.user.by
        return f"<Conversation {len(self.runs)} agent turns, the user played by {who}, {state}>"


def conversation(agent: Agent, task: Any, session: Session, tags: Mapping[str, str], seed: int,
                 key: Any, *, start: Start | None = None) -> Conversation:  # fmt: skip
    """The conversation of an evaluation's run of ``task`` (its ``user``): the user's seed
    derived from its own and the run's, its turns replayed when ``agent`` replays (those the
    recording holds for the run ``key``: never regenerated)."""
    user = task.user.with_seed(int(draw(task.user.seed, "run", seed) * 2**31))
    source = agent.replay
    replies = getattr(source, "user_turns", None)
    recorded = replies(key) if callable(replies) else None
    return Conversation(agent, user, task.input, session=session, tags=tags, recorded=recorded,
                        start=start)  # fmt: skip
