"""A session: one conversation, the single source of truth (invariant 1).

``session.messages`` is a read-only sequence of message objects in OpenAI shape; change it
through ``append``, ``edit``, ``replace``, ``delete``, ``truncate`` or ``repair`` so every
view hears about it. A session holds its :class:`~agentnb.transcript.Transcript`, the lock
that lets one run at a time work on it (invariant 4), one event bus whose ``seq`` numbers run
events and edits alike, the records of its runs, its store, and ``active_run``.

While a run holds it, edits are allowed only between steps and only if the conversation
stays valid; outside runs anything goes (a lesson may break it on purpose: runs refuse it).
"""

from __future__ import annotations

import time
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import display
from .bus import EventBus, SubscriberError
from .errors import InvalidConversation, SessionBusy
from .events import Event, MessageAppended, Origin, SessionEdited
from .lock import LockPolicy, SessionLock
from .messages import Message, parse_message
from .models.base import ModelRequest
from .pairing import conversation_problems
from .stores import MemoryStore, Store, validate_session_id
from .transcript import MessageList, Transcript

if TYPE_CHECKING:
    from .runtime.result import RunRecord
    from .runtime.run import Run

__all__ = ["MessageList", "Session", "SubscriberError", "conversation_problems"]


class Session:
    """A conversation: messages, the requests sent for it, the runs that touched it.

    Args:
        messages: the history to start from (dicts or message objects).
        id: the session id (generated when omitted); validated for stores.
        store: where commits go (a private :class:`~agentnb.stores.MemoryStore` by default).
        lock_policy: what a second concurrent run does: ``"wait"`` or ``"reject"``.
        lock: ``False`` switches the lock off (to show interleaving, article 000 §5.3).
    """

    def __init__(
        self,
        messages: Sequence[Message | dict[str, Any]] = (),
        *,
        id: str | None = None,
        store: Store | None = None,
        lock_policy: LockPolicy = "wait",
        lock: bool = True,
    ) -> None:
        self.id = validate_session_id(id) if id is not None else "s-" + os.urandom(5).hex()
        self.lock_policy: LockPolicy = lock_policy
        self.transcript = Transcript()
        self.lock = SessionLock(enabled=lock)
        self.bus = EventBus()
        self.store: Store = store if store is not None else MemoryStore()
        #: The store's version this session last wrote or read.
        self.version = 0
        self._saved = (0, 0)  # (messages committed, transcript.rewrites at that commit)
        #: The request of every model call on this session, in order (recorded by reference).
        self.snapshots: list[ModelRequest] = []
        self.runs: list[RunRecord] = []
        #: The run holding this session, if any (a view's Stop button reaches it here).
        self.active_run: Run | None = None
        self.forked_from: str | None = None
        self._origin: Origin | None = None
        for m in messages:
            self.transcript.append(m)
        if messages:
            self.commit()

    # -- reading ---------------------------------------------------------------------------
    @property
    def messages(self) -> MessageList:
        return MessageList(self.transcript.messages)

    def __len__(self) -> int:
        return len(self.transcript)

    def to_openai(self) -> list[dict[str, Any]]:
        """The transcript as OpenAI message dicts (fresh copies)."""
        return [m.to_openai() for m in self.transcript.messages]

    def wire(self) -> list[dict[str, Any]]:
        """The cached wire dicts, shared with requests: read only. Cheap."""
        return list(self.transcript.wires)

    @property
    def tokens(self) -> int:
        """Estimated prompt tokens of the whole transcript."""
        return self.transcript.tokens

    @property
    def problems(self) -> list[str]:
        """Pairing problems (invariant 2), in words; ``[]`` when the session is valid."""
        return self.transcript.problems()

    @property
    def is_valid(self) -> bool:
        return self.transcript.is_valid

    @property
    def open_calls(self) -> dict[str, str]:
        """Tool calls of the last assistant message still waiting for a result (id -> name)."""
        return self.transcript.open_ids

    def check(self) -> None:
        """Raise :class:`~agentnb.errors.InvalidConversation` if a model would reject this."""
        if not self.is_valid:
            problems = self.problems
            raise InvalidConversation(
                f"session {self.id!r} is not a valid conversation: {'; '.join(problems)}. "
                "Every assistant tool call needs exactly one tool message with its id before the "
                "next non-tool message; session.repair() answers the missing ones.",
                problems,
            )

    # -- changing ----------------------------------------------------------------------------
    def _guard(self, action: str, problems: Callable[[], list[str]]) -> None:
        """Refuse, before anything changes, an edit a run in progress could not survive."""
        run = self.active_run
        if run is None or run.done:
            return
        if run.driving:
            raise SessionBusy(
                f"cannot {action} session {self.id!r} while run {run.id!r} executes "
                f"{run.stage!r}; edit between steps (`await run.step()`) or after the run",
                self.id,
                run.id,
            )
        found = problems()
        if found:
            raise InvalidConversation(
                f"cannot {action} session {self.id!r} while run {run.id!r} is paused: it would "
                f"break the conversation ({'; '.join(found)}); nothing was changed",
                found,
            )

    def append(self, message: Message | dict[str, Any]) -> Message:
        """Validate and append a message (dict or message object); returns the object.

        Atomic: an invalid or unserialisable message raises ``InvalidMessage`` and nothing
        changes.
        """
        from .transcript import checked

        msg = checked(message, f"message #{len(self.transcript)}")
        self._guard(
            "append to", lambda: _problems([*self.transcript.messages, msg], self.active_run)
        )
        index = self.transcript.add(msg)
        self._edited(MessageAppended, index=index, message=msg)
        return msg

    def extend(self, messages: Sequence[Message | dict[str, Any]]) -> None:
        for m in messages:
            self.append(m)

    def _rewrite(self, action: str, new: list[Message], index: int, count: int) -> None:
        self._guard(action, lambda: _problems(new, self.active_run))
        self.transcript.rewrite(new)
        self._edited(SessionEdited, action=action, index=index, count=count)

    def replace(self, index: int, message: Message | dict[str, Any]) -> Message:
        """Put ``message`` at ``index`` (negative indexes count from the end)."""
        index = range(len(self.transcript))[index]
        new = self.transcript.replaced(index, message)
        self._rewrite("replace", new, index, 1)
        return new[index]

    def edit(self, index: int, **changes: Any) -> Message:
        """Replace the message at ``index`` with a copy whose fields are changed.

        ``session.edit(0, content="周六从上海去北京")``
        """
        current = self.transcript.messages[index]
        return self.replace(index, {**current.wire(), **changes})

    def delete(self, index: int) -> Message:
        """Remove and return the message at ``index``."""
        index = range(len(self.transcript))[index]
        new = list(self.transcript.messages)
        removed = new.pop(index)
        self._rewrite("delete", new, index, 1)
        return removed

    def truncate(self, length: int) -> list[Message]:
        """Keep the first ``length`` messages; return the removed ones."""
        old = self.transcript.messages
        self._rewrite("truncate", old[:length], length, len(old[length:]))
        return old[length:]

    def repair(self, note: str = "not executed") -> int:
        """Answer every unanswered tool call and drop results that answer nothing.

        Returns how many messages were added or removed. Use after hand edits; the runtime
        repairs its own runs.
        """
        fixed, changes = self.transcript.repaired(note)
        if changes:
            self._rewrite("repair", fixed, 0, changes)
        return changes

    def fork(self, at: int | None = None, *, id: str | None = None) -> Session:
        """A new session (with its own store) holding the first ``at`` messages (all by default)."""
        new = Session(self.transcript.messages[:at], id=id, lock_policy=self.lock_policy)
        new.forked_from = self.id
        return new

    # -- the store ----------------------------------------------------------------------------
    def commit(self) -> int | None:
        """Write what changed since the last commit to the store; returns the new version."""
        saved, rewrites = self._saved
        transcript = self.transcript
        if rewrites == transcript.rewrites and saved == len(transcript):
            return None
        wires = transcript.wires
        if rewrites != transcript.rewrites or saved > len(transcript):
            self.version = self.store.rewrite(self.id, self.version, wires)
        else:
            self.version = self.store.commit(self.id, self.version, wires[saved:])
        self._saved = (len(transcript), transcript.rewrites)
        return self.version

    def _restore_from_store(self, messages: list[dict[str, Any]], version: int) -> None:
        self.transcript.rewrite([parse_message(m, where="stored message") for m in messages])
        self.version = version
        self._saved = (len(self.transcript), self.transcript.rewrites)

    # -- events ---------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event of every run and every edit.

        Returns a function that unsubscribes. A callback that raises does not stop the run;
        its error is reported as a :class:`SubscriberError` warning.
        """
        self.bus.subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self.bus.subscribers:
                self.bus.subscribers.remove(callback)

        return unsubscribe

    def _edited(self, cls: type[Event], **fields: Any) -> None:
        """Number and publish an edit made outside a run's stages; commit it when idle."""
        run = self.active_run
        if run is None or run.done:
            self.commit()
        bus = self.bus
        bus.seq += 1
        if not bus.subscribers:
            return
        if self._origin is None:
            self._origin = Origin.now(self.id, None, None)
        origin = self._origin
        bus.publish(
            cls(
                seq=bus.seq,
                stage="edit",
                iteration=0,
                time=time.monotonic(),
                origin=origin,
                **fields,
            )
        )

    # -- display --------------------------------------------------------------------------
    def view(self, **options: Any) -> Any:
        """The live view of this session (``agentnb.widgets.SessionView``; needs ipywidgets)."""
        return display.live_view(self, **options)

    def __repr__(self) -> str:
        state = "valid" if self.is_valid else f"{len(self.problems)} problems"
        size = f"{len(self.transcript)} messages, ~{self.tokens} tokens"
        return f"<Session {self.id!r}: {size}, {state}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display.session_bundle(self)

    def static_mimebundle(self) -> dict[str, str]:
        """text/plain and escaped text/html: what nbviewer and GitHub show without a kernel."""
        return display.static_session_bundle(self)


def _problems(messages: list[Message], run: Run | None) -> list[str]:
    """What an edit during a paused run would break. Calls of the last assistant message may
    stay open only when the run's next stage executes them."""
    problems = conversation_problems(messages)
    if run is not None and run.next_stage == "execute_tools":
        problems = [p for p in problems if not p.endswith("have no tool result yet")]
    return problems
