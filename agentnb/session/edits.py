"""Editing a session: append, edit, replace, delete, truncate, repair — guarded against runs.

Every edit is atomic (validated before anything changes) and announced on the session's bus
(``MessageAppended`` or ``SessionEdited``). While a run holds the session, an edit is allowed
only between steps and only if the run can go on from it: the conversation must stay valid,
except for the open calls of the last assistant message when the run's next stage executes
them (so a learner may edit a tool call before it runs). Edits while a stage executes raise
:class:`~agentnb.errors.SessionBusy`; edits that would break the run raise
:class:`~agentnb.errors.InvalidConversation`; neither changes anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidConversation, InvalidMessage, SessionBusy
from ..events import Event, MessageAppended, SessionEdited, describe_edit
from ..messages import Message
from .lock import ActiveRun
from .pairing import conversation_problems
from .transcript import Transcript, checked

__all__ = ["EditRecord", "Editing", "changed_paths"]


@dataclass(frozen=True, slots=True, eq=False)
class EditRecord:
    """One hand edit, kept by the session so views, diffs and traces can say what changed.

    ``seq`` is the edit's ``SessionEdited`` event number; ``how`` the method that made it
    (``edit_result``, ``edit_call``, ``edit``, ``replace``, ``delete``, ``truncate``,
    ``repair``); ``before`` the wire dict it replaced (None for removals); ``message`` the
    message it put in place (views find edited messages by it); ``changed`` the paths that
    differ (``content``, ``content.price``, ``tool_calls[0].function.arguments.city``).
    """

    seq: int
    how: str
    index: int
    before: dict[str, Any] | None = field(repr=False)
    message: Message | None = field(repr=False)
    changed: tuple[str, ...] = ()
    call_id: str | None = None

    def describe(self) -> str:
        """One line for a timeline or a card: what was edited, where, which fields."""
        return describe_edit(self.how, self.index, self.call_id, self.changed)


def _json(value: Any) -> Any:
    """A JSON object or array held in a string, parsed; anything else unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def changed_paths(before: Any, after: Any, path: str = "") -> list[str]:
    """The paths where two JSON-like values differ, descending into JSON held in strings
    (tool results, call arguments): ``["content.price", "content.flights[1]"]``."""
    a, b = _json(before), _json(after)
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in [*a, *(k for k in b if k not in a)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append(sub)
            else:
                out += changed_paths(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            out += changed_paths(a[i], b[i], sub) if i < len(a) and i < len(b) else [sub]
        return out
    return [] if a == b else [path or "(value)"]


class Editing:
    """The edit methods of :class:`~agentnb.Session` (a mixin: the session holds the state)."""

    id: str
    transcript: Transcript

    @property
    def active_run(self) -> ActiveRun | None:
        raise NotImplementedError

    # -- the edit record ---------------------------------------------------------------------
    @property
    def edits(self) -> list[EditRecord]:
        """Every hand edit of this session, oldest first (see :class:`EditRecord`)."""
        log: list[EditRecord] | None = self.__dict__.get("_edit_log")
        if log is None:
            log = self.__dict__["_edit_log"] = []
        return log

    def edit_of(self, message: Message) -> EditRecord | None:
        """The latest edit that put ``message`` in this session, or None (it is as produced)."""
        for record in reversed(self.edits):
            if record.message is message:
                return record
        return None

    def _edited(self, cls: type[Event], **fields: Any) -> Event:
        raise NotImplementedError

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
        self, action: str, new: list[Message], index: int, count: int, how: str = "",
        call_id: str | None = None,
    ) -> None:  # fmt: skip
        self._guard(action, lambda: _problems(new, self.active_run))
        old = self.transcript.messages
        wire = old[index].wire() if action in ("replace", "delete") and index < len(old) else None
        after = new[index] if action == "replace" else None
        changed = tuple(changed_paths(wire, after.wire())) if wire and after is not None else ()
        how = how or action
        self.transcript.rewrite(new)
        event = self._edited(SessionEdited, action=action, index=index, count=count, how=how,
                             changed=changed, call_id=call_id, before=wire)  # fmt: skip
        self.edits.append(EditRecord(event.seq, how, index, wire, after, changed, call_id))

    def replace(self, index: int, message: Message | dict[str, Any]) -> Message:
        """Put ``message`` at ``index`` (negative indexes count from the end)."""
        return self._replace(index, message, "replace")

    def _replace(self, index: int, message: Message | dict[str, Any], how: str,
                 call_id: str | None = None) -> Message:  # fmt: skip
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
        self, call_id: str, *, arguments: dict[str, Any] | str | None = None,
        name: str | None = None,
    ) -> Message:  # fmt: skip
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
