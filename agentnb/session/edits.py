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

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InvalidConversation, SessionBusy
from ..events import Event, MessageAppended, SessionEdited
from ..messages import Message
from .lock import ActiveRun
from .pairing import conversation_problems
from .transcript import Transcript, checked

__all__ = ["Editing"]


class Editing:
    """The edit methods of :class:`~agentnb.Session` (a mixin: the session holds the state)."""

    id: str
    transcript: Transcript

    @property
    def active_run(self) -> ActiveRun | None:
        raise NotImplementedError

    def _edited(self, cls: type[Event], **fields: Any) -> None:
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


def _problems(messages: list[Message], run: ActiveRun | None) -> list[str]:
    """What an edit during a paused run would break. Calls of the last assistant message may
    stay open only when the run's next stage executes them."""
    problems = conversation_problems(messages)
    if run is not None and run.next_stage == "execute_tools":
        problems = [p for p in problems if p.kind != "open"]
    return [str(p) for p in problems]
