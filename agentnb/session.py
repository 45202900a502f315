"""A session: one conversation's transcript, the single source of truth (invariant 1).

``session.messages`` is a read-only sequence of message objects in OpenAI shape; change it
through ``append``, ``replace``, ``delete`` or ``truncate`` so every view hears about it.
The session tracks tool-call pairing as messages arrive (invariant 2) and holds the lock
that lets one run at a time work on it (invariant 4).
"""

from __future__ import annotations

import asyncio
import time
import uuid
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from . import _html
from .errors import InvalidConversation, SessionBusy
from .events import Event, MessageAppended, Origin, SessionEdited
from .messages import Message, ToolMessage, parse_message
from .models.base import ModelRequest, Usage
from .pairing import Pairing, conversation_problems
from .tools import error_content

__all__ = ["MessageList", "RunRecord", "Session", "SubscriberError", "conversation_problems"]

LockPolicy = Literal["wait", "reject"]


class SubscriberError(RuntimeWarning):
    """A session subscriber raised; the run went on. The warning names the callback."""


class MessageList(Sequence[Message]):
    """A read-only view of a session's messages (edits go through the session)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[Message]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._items)

    def _readonly(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "session.messages is read-only; use session.append(message), "
            "session.replace(index, message), session.delete(index) or session.truncate(n)"
        )

    __setitem__ = __delitem__ = _readonly
    append = extend = insert = pop = remove = clear = _readonly

    def __eq__(self, other: object) -> bool:
        return list(self._items) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return "[" + ",\n ".join(repr(m) for m in self._items) + "]"


@dataclass
class RunRecord:
    """What one run did to this session: where its messages are and why it stopped."""

    run_id: str
    trace_id: str
    input: str | None
    start: int
    end: int = -1
    stop_reason: str | None = None
    detail: str = ""
    usage: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.time)


class _RunLock:
    """One run at a time. Loop-agnostic: waiters are futures on the waiting run's loop."""

    __slots__ = ("holder", "paused", "waiters")

    def __init__(self) -> None:
        self.holder: str | None = None
        self.paused = False
        self.waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self, run_id: str, session_id: str, policy: LockPolicy) -> None:
        while self.holder is not None:
            if policy == "reject" or self.paused:
                why = (
                    "is paused between steps; finish it with `await run.finish()` or call "
                    "`run.cancel()`"
                    if self.paused
                    else "is still running; wait for it, or use lock_policy='wait'"
                )
                raise SessionBusy(
                    f"session {session_id!r} is held by run {self.holder!r}, which {why}",
                    session_id,
                    self.holder,
                )
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self.waiters:
                    self.waiters.remove(waiter)
        self.holder = run_id

    def release(self) -> None:
        self.holder = None
        self.paused = False
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.get_loop().call_soon_threadsafe(_wake, waiter)
                break


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Session:
    """A conversation: messages, the requests sent for it, the runs that touched it.

    ``lock_policy`` says what a second concurrent run does: ``"wait"`` (queue behind the
    first) or ``"reject"`` (raise :class:`~agentnb.errors.SessionBusy`).
    """

    def __init__(
        self,
        messages: Sequence[Message | dict[str, Any]] = (),
        *,
        id: str | None = None,
        lock_policy: LockPolicy = "wait",
    ) -> None:
        self.id = id or "s-" + uuid.uuid4().hex[:10]
        self.lock_policy: LockPolicy = lock_policy
        self._messages: list[Message] = []
        self._wires: list[dict[str, Any]] = []  # cached wire dicts, parallel to _messages
        self._pairing = Pairing()
        self._tokens = 0
        self._subscribers: list[Callable[[Event], Any]] = []
        self._seq = 0
        self._origin: Origin | None = None
        self.snapshots: list[ModelRequest] = []
        self.runs: list[RunRecord] = []
        self.committed = 0
        self.lock = _RunLock()
        self.forked_from: str | None = None
        for m in messages:
            self.append(m)

    # -- reading ---------------------------------------------------------------------------
    @property
    def messages(self) -> MessageList:
        return MessageList(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def to_openai(self) -> list[dict[str, Any]]:
        """The transcript as OpenAI message dicts (fresh copies)."""
        return [m.to_openai() for m in self._messages]

    def wire(self) -> list[dict[str, Any]]:
        """The cached wire dicts, shared with requests: read only. Cheap."""
        return list(self._wires)

    @property
    def tokens(self) -> int:
        """Estimated prompt tokens of the whole transcript."""
        return self._tokens

    @property
    def problems(self) -> list[str]:
        """Pairing problems (invariant 2), in words; ``[]`` when the session is valid."""
        return conversation_problems(self._messages)

    @property
    def is_valid(self) -> bool:
        return not self._pairing.problems and not self._pairing.open

    @property
    def open_calls(self) -> dict[str, str]:
        """Tool calls of the last assistant message still waiting for a result (id -> name)."""
        return dict(self._pairing.open)

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
    def _add(self, message: Message) -> int:
        index = len(self._messages)
        self._messages.append(message)
        self._wires.append(message.wire())
        self._pairing.feed(index, message)
        self._tokens += message.tokens
        return index

    def append(self, message: Message | dict[str, Any]) -> Message:
        """Validate and append a message (dict or message object); returns the object."""
        msg = parse_message(message, where=f"message #{len(self._messages)}")
        index = self._add(msg)
        self._notify_local(MessageAppended, index=index, message=msg)
        return msg

    def extend(self, messages: Sequence[Message | dict[str, Any]]) -> None:
        for m in messages:
            self.append(m)

    def replace(self, index: int, message: Message | dict[str, Any]) -> Message:
        """Put ``message`` at ``index`` (negative indexes count from the end)."""
        index = range(len(self._messages))[index]
        msg = parse_message(message, where=f"message #{index}")
        self._messages[index] = msg
        self._rebuild()
        self._notify_local(SessionEdited, action="replace", index=index, count=1)
        return msg

    def edit(self, index: int, **changes: Any) -> Message:
        """Replace the message at ``index`` with a copy whose fields are changed.

        ``session.edit(0, content="周六从上海去北京")``
        """
        current = self._messages[index]
        return self.replace(index, {**current.wire(), **changes})

    def delete(self, index: int) -> Message:
        """Remove and return the message at ``index``."""
        index = range(len(self._messages))[index]
        msg = self._messages.pop(index)
        self._rebuild()
        self._notify_local(SessionEdited, action="delete", index=index, count=1)
        return msg

    def truncate(self, length: int) -> list[Message]:
        """Keep the first ``length`` messages; return the removed ones."""
        removed = self._messages[length:]
        del self._messages[length:]
        self._rebuild()
        self._notify_local(SessionEdited, action="truncate", index=length, count=len(removed))
        return removed

    def repair(self, note: str = "not executed") -> int:
        """Answer every unanswered tool call and drop results that answer nothing.

        Returns how many messages were added or removed. Use after hand edits; the runtime
        repairs its own runs.
        """
        fixed: list[Message] = []
        pairing = Pairing()
        changes = 0

        def close() -> None:
            nonlocal changes
            for call_id, name in list(pairing.open.items()):
                msg = ToolMessage(
                    tool_call_id=call_id,
                    name=name,
                    content=error_content(
                        note, "the call was never executed; do not assume a result"
                    ),
                )
                pairing.feed(len(fixed), msg)
                fixed.append(msg)
                changes += 1

        for m in self._messages:
            if isinstance(m, ToolMessage):
                if m.tool_call_id not in pairing.open:
                    changes += 1
                    continue
            elif pairing.open:
                close()
            pairing.feed(len(fixed), m)
            fixed.append(m)
        close()
        if changes:
            self._messages[:] = fixed
            self._rebuild()
            self._notify_local(SessionEdited, action="repair", index=0, count=changes)
        return changes

    def fork(self, at: int | None = None, *, id: str | None = None) -> Session:
        """A new session holding the first ``at`` messages (all by default)."""
        new = Session(id=id, lock_policy=self.lock_policy)
        for m in self._messages[:at]:
            new._add(m)
        new.forked_from = self.id
        return new

    def _rebuild(self) -> None:
        self._wires = [m.wire() for m in self._messages]
        self._pairing = Pairing()
        self._tokens = 0
        for i, m in enumerate(self._messages):
            self._pairing.feed(i, m)
            self._tokens += m.tokens
        self.committed = min(self.committed, len(self._messages))

    # -- events ---------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event of every run and every edit.

        Returns a function that unsubscribes. A callback that raises does not stop the run;
        its error is reported as a :class:`SubscriberError` warning.
        """
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _publish(self, event: Event) -> None:
        for callback in self._subscribers:
            try:
                callback(event)
            except Exception as exc:
                warnings.warn(
                    f"session subscriber {callback!r} raised {type(exc).__name__}: {exc}",
                    SubscriberError,
                    stacklevel=2,
                )

    def _notify_local(self, cls: type[Event], **fields: Any) -> None:
        if not self._subscribers:
            return
        self._seq += 1
        if self._origin is None or self._origin.session_id != self.id:
            self._origin = Origin.now(self.id, None, None)
        event = cls(
            seq=self._seq,
            stage="edit",
            iteration=0,
            time=time.monotonic(),
            origin=self._origin,
            **fields,
        )
        self._publish(event)

    # -- display --------------------------------------------------------------------------
    def __repr__(self) -> str:
        state = "valid" if self.is_valid else f"{len(self.problems)} problems"
        size = f"{len(self._messages)} messages, ~{self._tokens} tokens"
        return f"<Session {self.id!r}: {size}, {state}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        notes: dict[int, str] = {}
        for problem in self.problems:
            index, _, text = problem.partition(": ")
            notes[int(index.lstrip("#"))] = text
        lines = [repr(self)] + [f"  #{i} {m!r}" for i, m in enumerate(self._messages)]
        html = _html.transcript(self.wire(), title=repr(self), notes=notes)
        return {"text/plain": "\n".join(lines), "text/html": html}
