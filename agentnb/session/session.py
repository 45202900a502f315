"""A session: one conversation, the single source of truth (invariant 1), and its edits.

``session.messages`` is a read-only sequence of message objects in OpenAI shape; change it
through ``append``, ``edit``, ``replace``, ``delete``, ``truncate`` or ``repair`` so every
view hears about it. A session holds its :class:`~agentnb.session.transcript.Transcript`, the lock
that lets one run at a time work on it (invariant 4), one event bus whose ``seq`` numbers run
events and edits alike, the records of its runs, its store, and ``active_run``.

Every edit is atomic (validated before anything changes) and announced on the session's bus
(``MessageAppended`` or ``SessionEdited``). While a run holds the session, an edit is allowed
only between steps and only if the run can go on from it: the conversation must stay valid,
except for the open calls of the last assistant message when the run's next stage executes
them (so a learner may edit a tool call before it runs). Edits while a stage executes raise
:class:`~agentnb.errors.SessionBusy`; edits that would break the run raise
:class:`~agentnb.errors.InvalidConversation`; neither changes anything. Outside runs anything
goes (a lesson may break the conversation on purpose: runs refuse it).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import display
from ..display import Shown
from ..errors import (
    AgentnbError,
    ConfigurationError,
    InvalidConversation,
    InvalidMessage,
    SessionBusy,
    StoreError,
)
from ..events import Event, MessageAppended, Origin, SessionEdited
from ..messages import MEMORY_NAME, Message, parse_message
from ..models.base import ModelRequest
from ..provenance import Provenance
from ..provenance import marks as provenance_marks
from ..provenance import of as provenance_of
from .bus import EventBus, SubscriberError
from .edits import EditRecord, changed_paths
from .lock import ActiveRun, LockPolicy, SessionLock
from .pairing import Problem, conversation_problems
from .records import RequestRecord, RunRecord
from .store import EXPORT_HEADER, BaseStore, InMemory, Store, validate_session_id
from .transcript import MessageList, Transcript, checked

if TYPE_CHECKING:
    from ..context.memory import Memory

__all__ = [
    "MemoryStore",
    "MessageList",
    "Session",
    "SessionStore",
    "SubscriberError",
    "conversation_problems",
]


class Session(Shown):
    """A conversation: messages, the requests sent for it, the runs that touched it.

    Args:
        messages: the history to start from (dicts or message objects).
        id: the session id (generated when omitted); validated for stores.
        store: where commits go (a private :class:`MemoryStore` by default).
        lock_policy: what a second concurrent run does: ``"wait"`` or ``"reject"``.
        lock: ``False`` switches the lock off (to show interleaving, article 000 §5.3).
        memory: the user's long-term :class:`~agentnb.context.memory.Memory`: recalled into each
            request, and given the run's successful tool results when it persists.
    """

    def __init__(
        self,
        messages: Sequence[Message | dict[str, Any]] = (),
        *,
        id: str | None = None,
        store: Store | None = None,
        lock_policy: LockPolicy = "wait",
        lock: bool = True,
        memory: Memory | None = None,
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
        #: Every model request of this session, in order, with its budget (by reference).
        self.requests: list[RequestRecord] = []
        self.runs: list[RunRecord] = []
        self.forked_from: str | None = None
        #: Sessions sub-agents ran in for this one's tool calls (``Agent.as_tool``), by id.
        self.subsessions: dict[str, Session] = {}
        self.memory = memory
        self._edits: list[EditRecord] = []
        self._origin: Origin | None = None
        for m in messages:
            self.transcript.append(m)
        if messages:
            self.commit()

    # -- reading ---------------------------------------------------------------------------
    @property
    def snapshots(self) -> list[ModelRequest]:
        """The requests of ``session.requests`` alone (kept one release; read ``requests``)."""
        return [record.request for record in self.requests]

    @property
    def active_run(self) -> ActiveRun | None:
        """The run holding this session, if any (read from the lock's hold; a view's Stop
        button, or a lost stepper's owner, reaches the run here)."""
        hold = self.lock.hold
        return None if hold is None else hold.run

    @property
    def messages(self) -> MessageList:
        return MessageList(self.transcript.messages)

    def __len__(self) -> int:
        return len(self.transcript)

    def to_openai(self) -> list[dict[str, Any]]:
        """The transcript as OpenAI message dicts (fresh copies), lossless: an assistant
        message keeps its ``reasoning_content`` and, from the Responses API or Anthropic, its
        ``provider_data`` (signed or encrypted reasoning, to be sent back exactly). A Chat
        Completions server takes neither back: ``OpenAIModel`` leaves them out of what it
        sends, and says so in the reply's ``repairs`` when reasoning another API wrote was
        left out."""
        return [m.to_openai() for m in self.transcript.messages]

    def wire(self) -> list[dict[str, Any]]:
        """The cached wire dicts, shared with requests: read only. Cheap."""
        return list(self.transcript.wires)

    @property
    def tokens(self) -> int:
        """Estimated prompt tokens of the whole transcript."""
        return self.transcript.tokens

    @property
    def problems(self) -> list[Problem]:
        """Pairing problems (invariant 2) as :class:`~agentnb.session.pairing.Problem` records
        (strings ``"#index: text"`` with ``index``, ``kind`` and ``text``); ``[]`` when valid."""
        return self.transcript.problems()

    @property
    def is_valid(self) -> bool:
        return self.transcript.is_valid

    @property
    def open_calls(self) -> dict[str, str]:
        """Tool calls of the last assistant message still waiting for a result (id -> name)."""
        return self.transcript.open_ids

    def provenance(self, run: Any = None, *, today: Any = None) -> Provenance:
        """Where every tool-call argument and every figure of an answer came from: ``user[k]``,
        ``instructions``, ``memory``, ``tool_result[call_id]`` (with the span, and the
        instruction found there if any) or ``invented`` (:mod:`agentnb.provenance`). ``run``
        (a run id or ``RunRecord``) keeps one run's values; ``today`` (a ``date``) resolves
        relative dates such as 周五. Computed when asked, never during a run."""
        return provenance_of(self.transcript.wires, requests=self.requests, runs=self.runs,
                             run=run, today=today)  # fmt: skip

    def check(self) -> None:
        """Raise :class:`~agentnb.errors.InvalidConversation` if a model would reject this."""
        if not self.is_valid:
            problems = [str(p) for p in self.problems]
            raise InvalidConversation(
                f"session {self.id!r} is not a valid conversation: {'; '.join(problems)}. "
                "Every assistant tool call needs exactly one tool message with its id before the "
                "next non-tool message; session.repair() answers the missing ones.",
                problems,
            )

    def fork(
        self, at: int | None = None, *, call: int | None = None, id: str | None = None
    ) -> Session:
        """A new session (with its own store) holding the first ``at`` messages (all by default).

        ``call=k`` forks *at model call k* instead (0-based, counting the assistant replies):
        the fork holds what that call was asked with and not its reply, so you can edit a
        message (a tool result, the user's words) and continue with
        ``agent.run(None, session=fork)``, tools live or replayed (``agent.replaying``).
        """
        if call is not None:
            if at is not None:
                raise ValueError("give at= (a message count) or call= (a model call), not both")
            replies = [i for i, m in enumerate(self.transcript.messages) if m.role == "assistant"]
            if not 0 <= call < len(replies):
                raise IndexError(f"model call {call} is not in this session ({len(replies)} made)")
            at = replies[call]
        new = Session(self.transcript.messages[:at], id=id, lock_policy=self.lock_policy)
        new.forked_from = self.id
        return new

    def fresh(self, *, id: str | None = None, carry: Sequence[str] = ()) -> Session:
        """A new, empty session for a new task (000 §5.4: no ghost calls from old history).

        It shares this session's store, lock policy and memory. ``carry`` lists facts to take
        along: they start the new session as one marked system message, and are kept in the
        memory when there is one.
        """
        note: list[dict[str, Any]] = []
        if carry:
            facts = "\n".join(f"- {fact}" for fact in carry)
            text = f"Carried over from session {self.id}:\n{facts}"
            note.append({"role": "system", "name": MEMORY_NAME, "content": text})
        new = Session(
            note, id=id, store=self.store, lock_policy=self.lock_policy, memory=self.memory
        )
        for fact in carry:
            if self.memory is not None:
                self.memory.remember(fact, source=self.id)
        new.forked_from = self.id
        return new

    # -- the edit record ---------------------------------------------------------------------
    @property
    def edits(self) -> list[EditRecord]:
        """Every hand edit of this session, oldest first (see :class:`EditRecord`)."""
        return self._edits

    def edit_of(self, message: Message) -> EditRecord | None:
        """The latest edit that put ``message`` in this session, or None (it is as produced)."""
        for record in reversed(self.edits):
            if record.message is message:
                return record
        return None

    # -- changing ----------------------------------------------------------------------------
    def _guard(self, action: str, problems: Callable[[], list[str]]) -> None:
        """Refuse, before anything changes, an edit a run in progress could not survive."""
        run = self.active_run
        if run is None:
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

    def _rewrite(
        self,
        action: str,
        new: list[Message],
        index: int,
        count: int,
        how: str = "",
        call_id: str | None = None,
    ) -> None:
        self._guard(action, lambda: _problems(new, self.active_run))
        old = self.transcript.messages
        wire = old[index].wire() if action in ("replace", "delete") and index < len(old) else None
        after = new[index] if action == "replace" else None
        changed = tuple(changed_paths(wire, after.wire())) if wire and after is not None else ()
        how = how or action
        self.transcript.rewrite(new)
        where = {"action": action, "index": index, "count": count, "how": how}
        event = self._edited(SessionEdited, **where, changed=changed, call_id=call_id, before=wire)
        self.edits.append(EditRecord(event.seq, how, index, wire, after, changed, call_id))

    def replace(self, index: int, message: Message | dict[str, Any]) -> Message:
        """Put ``message`` at ``index`` (negative indexes count from the end)."""
        return self._replace(index, message, "replace")

    def _replace(
        self, index: int, message: Message | dict[str, Any], how: str, call_id: str | None = None
    ) -> Message:
        index = range(len(self.transcript))[index]
        new = self.transcript.replaced(index, message)
        self._rewrite("replace", new, index, 1, how, call_id)
        return new[index]

    def edit(self, index: int, **changes: Any) -> Message:
        """Replace the message at ``index`` with a copy whose fields are changed.

        ``session.edit(0, content="周六从上海去北京")``
        """
        current = self.transcript.messages[index]
        return self._replace(index, {**current.wire(), **changes}, "edit")

    def edit_call(
        self,
        call_id: str,
        *,
        arguments: dict[str, Any] | str | None = None,
        name: str | None = None,
    ) -> Message:
        """Change the arguments (a dict, or JSON text) or the tool name of one tool call.

        ``session.edit_call("call_1", arguments={"city": "北京"})``: the assistant message that
        made the call is replaced by a copy; between steps, before ``execute_tools``, the run
        then executes the edited call.
        """
        for index, message in enumerate(self.transcript.messages):
            calls = (
                message.wire().get("tool_calls") if message.role == "assistant" else None
            ) or []
            for k, call in enumerate(calls):
                if call.get("id") != call_id:
                    continue
                fn = dict(call.get("function") or {})
                if arguments is not None:
                    text = arguments if isinstance(arguments, str) else _dumps(arguments)
                    fn["arguments"] = text
                if name is not None:
                    fn["name"] = name
                new_calls = [dict(c) for c in calls]
                new_calls[k] = {**call, "function": fn}
                wire = {**message.wire(), "tool_calls": new_calls}
                return self._replace(index, wire, "edit_call", call_id)
        raise InvalidMessage(self._no_call(call_id, "no assistant message makes the tool call"))

    def edit_result(self, call_id: str, content: Any) -> Message:
        """Replace the result of tool call ``call_id`` by ``content`` (text, or a JSON value).

        ``session.edit_result("call_1", {"ok": True, "price": 650})``: the view marks the
        result as edited (and what changed); diffs attribute it to this edit, not the tool.
        """
        text = content if isinstance(content, str) else _dumps(content)
        for index, message in enumerate(self.transcript.messages):
            if message.role == "tool" and getattr(message, "tool_call_id", None) == call_id:
                wire = {**message.wire(), "content": text}
                return self._replace(index, wire, "edit_result", call_id)
        raise InvalidMessage(self._no_call(call_id, "no tool message answers the call"))

    def _no_call(self, call_id: str, why: str) -> str:
        known = [
            c.id for m in self.transcript.messages for c in (getattr(m, "tool_calls", None) or ())
        ]
        shown = ", ".join(repr(k) for k in known[-8:]) or "none"
        return f"{why} {call_id!r} in session {self.id!r} (its latest call ids: {shown})"

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

    # -- the store ----------------------------------------------------------------------------
    def commit(self) -> int | None:
        """Write what changed since the last commit to the store; returns the new version."""
        saved, rewrites = self._saved
        transcript = self.transcript
        size = len(transcript.messages)
        if rewrites == transcript.rewrites and saved == size:
            return None
        wires = transcript.wires
        try:
            if rewrites != transcript.rewrites or saved > size:
                self.version = self.store.rewrite(self.id, self.version, wires)
            else:
                self.version = self.store.commit(self.id, self.version, wires[saved:])
        except AgentnbError:
            raise
        except Exception as exc:
            why = f"the {self.store.name} store could not save {self.id!r}: {exc}"
            raise StoreError(why) from exc
        self._saved = (size, transcript.rewrites)
        return self.version

    @classmethod
    def open(cls, store: Store, session_id: str) -> Session:
        """The session ``session_id`` as ``store`` holds it, ready to continue (its writes go
        back there). The one way a stored session is read: ``store.load(id)`` calls it."""
        version, messages = store.read(validate_session_id(session_id))
        session = cls(id=session_id, store=store)
        session._restore_from_store(messages, version)
        return session

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

    def _edited(self, cls: type[Event], **fields: Any) -> Event:
        """Number and publish an edit made outside a run's stages; commit it when idle."""
        if self.active_run is None:
            self.commit()
        if self._origin is None:
            self._origin = Origin.now(self.id, None, None)
        return self.bus.emit(cls, self._origin, "edit", 0, time.monotonic(), fields)

    # -- display --------------------------------------------------------------------------
    def view(self, **options: Any) -> Any:
        """The live view of this session (``agentnb.widgets.SessionView``; needs ipywidgets)."""
        return display.view(self, **options)

    def __repr__(self) -> str:
        state = "valid" if self.is_valid else f"{len(self.problems)} problems"
        size = f"{len(self.transcript)} messages, ~{self.tokens} tokens"
        return f"<Session {self.id!r}: {size}, {state}>"

    def static_bundle(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """text/plain and escaped text/html: what nbviewer and GitHub show without a kernel
        (its last :data:`~agentnb.display.STATIC_LIMIT` messages, problems at their place,
        flagged spans and steered calls marked: :meth:`static_marks`, traced only when the
        HTML is made)."""
        transcript = self.transcript
        return display.transcript_bundle(
            transcript.messages,
            transcript.wires,
            title=repr(self),
            problems=self.problems,
            marks=self.static_marks,
            include=include,
            exclude=exclude,
        )

    def static_marks(self, start: int = 0, end: int | None = None) -> dict[int, dict[str, Any]]:
        """What the static HTML marks of the messages before ``end``, by message index:
        instructions found in tool results and memory, the calls they steered, and where each
        argument of a call from message ``start`` on came from (calls and results traced, not
        answers' figures: :func:`agentnb.provenance.marks`)."""
        wires = self.transcript.wires[:end]
        return provenance_marks(wires, requests=self.requests, shown_from=start)

    def static_mimebundle(self) -> dict[str, str]:
        """The same as :meth:`static_bundle` (its earlier name)."""
        return self.static_bundle()


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidMessage(f"the edit is not JSON-serialisable: {exc}") from None


def _problems(messages: list[Message], run: ActiveRun | None) -> list[str]:
    """What an edit during a paused run would break. Calls of the last assistant message may
    stay open only when the run's next stage executes them."""
    problems = conversation_problems(messages)
    if run is not None and run.next_stage == "execute_tools":
        problems = [p for p in problems if p.kind != "open"]
    return [str(p) for p in problems]


class SessionStore(BaseStore):
    """What a store offers beyond the seam that makes a session of a stored one: ``load``
    (:meth:`Session.open`) and JSONL import. Beside the Session, so that
    :mod:`~agentnb.session.store` needs nothing of it (every store is one: the
    :class:`MemoryStore` below, the SQL stores of :mod:`agentnb.storage`)."""

    def import_jsonl(self, path: str | Path, session_id: str | None = None) -> Session:
        """Store the session in ``path`` (written by :meth:`export_jsonl`, or a plain list of
        messages with ``session_id``) and return it. Lines are split on ``\\n`` only."""
        try:
            lines = [line for line in Path(path).read_text(encoding="utf-8").split("\n") if line]
            records = [json.loads(line) for line in lines]
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise ConfigurationError(f"{path} is not an exported agentnb session: {exc}") from None
        header = records[0] if records and isinstance(records[0], dict) else {}
        if EXPORT_HEADER in header:
            records = records[1:]
        elif session_id is None:  # a plain list of messages: nothing names the session
            raise ConfigurationError(
                f"{path} has no header line naming the session; pass session_id=... to import "
                "it as a plain list of messages"
            )
        name = session_id or header[EXPORT_HEADER]
        if validate_session_id(name) in self.list():
            raise ConfigurationError(
                f"session {name!r} is already in this store; delete it first, or import it "
                "under another id with session_id=..."
            )
        return Session(records, id=name, store=self)

    def load(self, session_id: str) -> Session:
        """The stored session, ready to continue (its writes come back to this store)."""
        return Session.open(self, session_id)


class MemoryStore(SessionStore, InMemory):
    """Sessions in a dict of this process (:class:`~agentnb.session.store.InMemory`), the
    default store of a Session. Share one between sessions to load by id."""
