"""Stores: where a session's messages live between runs and processes (000 §3.3).

A :class:`Store` keeps, per session id, a list of OpenAI message dicts and a version that
every write increments. Writes are optimistic: ``commit`` (append) and ``rewrite`` (replace
the history, after an edit) name the version they build on, and a store whose version moved
on raises :class:`~agentnb.errors.SessionConflict` instead of interleaving two writers.
The ``persist`` stage commits a run's new messages; edits outside runs commit at once.

The seam is sessions only: ``read``, ``commit``, ``rewrite``, ``list``, ``delete``. What a
store offers beyond it is shared by :class:`BaseStore` (JSONL export: a header line naming
the session, then one message per line) and, because it makes sessions, by
:class:`~agentnb.session.session.SessionStore` beside the Session: ``load`` (one path,
:meth:`Session.open <agentnb.session.session.Session.open>`) and JSONL import. So this
module needs nothing of the Session, and the Session's default store nothing above it.
Long-term memory has its own small protocol, :class:`~agentnb.context.memory.MemoryBackend`,
which the stores implement.

:class:`~agentnb.session.session.MemoryStore` (:class:`InMemory` with ``load`` and
``import_jsonl``) is the default (one per session unless you share one).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .. import _json
from ..errors import ConfigurationError, SessionConflict, SessionNotFound, StoreError

__all__ = ["EXPORT_HEADER", "BaseStore", "InMemory", "Records", "Store", "validate_session_id"]

#: A list of JSON-ready dicts (messages, memory items), as stores keep them.
Records = list[dict[str, Any]]

#: The key of an exported session's header line, naming the session.
EXPORT_HEADER = "agentnb_session"

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def validate_session_id(session_id: object) -> str:
    """A session id: 1-128 letters, digits, ``_ . : -``, starting with a letter or digit."""
    if not isinstance(session_id, str) or not _ID.fullmatch(session_id):
        raise ConfigurationError(
            f"session id {session_id!r} is not allowed: use 1-128 letters, digits, '_', '.', ':' "
            "or '-', starting with a letter or digit"
        )
    return session_id


@runtime_checkable
class Store(Protocol):
    """What the runtime needs of a store: a session's messages and version, by id."""

    name: str

    def read(self, session_id: str) -> tuple[int, Records]:
        """(version, messages) or :class:`~agentnb.errors.SessionNotFound`."""
        ...

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        """Append ``messages`` on top of version ``base``; return the new version."""
        ...

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        """Replace the history built on version ``base``; return the new version."""
        ...

    def list(self) -> list[str]:
        """Every stored session id, sorted."""
        ...

    def delete(self, session_id: str) -> None:
        """Remove a session, or :class:`~agentnb.errors.SessionNotFound`."""
        ...


class BaseStore:
    """JSONL export and the conflict errors, shared by the stores (what makes a session of a
    stored one, ``load`` and ``import_jsonl``, is
    :class:`~agentnb.session.session.SessionStore`'s)."""

    name = "store"

    def read(self, session_id: str) -> tuple[int, Records]:
        raise NotImplementedError

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        raise NotImplementedError

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        raise NotImplementedError

    def list(self) -> list[str]:
        raise NotImplementedError

    def delete(self, session_id: str) -> None:
        raise NotImplementedError

    def export_jsonl(self, session_id: str, path: str | Path) -> Path:
        """Write the stored session to ``path``: a header line naming it, then one OpenAI
        message per line, atomically and with the one rule for characters
        (:mod:`agentnb._json`: every line stays one line and reads back exactly)."""
        version, messages = self.read(validate_session_id(session_id))
        records: list[Any] = [{EXPORT_HEADER: session_id, "version": version}, *messages]
        text = "".join(_json.dumps(r) + "\n" for r in records)
        try:
            return _json.write_atomically(path, text)
        except OSError as exc:
            why = f"session {session_id!r} could not be exported to {path}: {exc}"
            raise StoreError(why) from exc

    @staticmethod
    def _conflict(session_id: str, base: int, actual: int) -> SessionConflict:
        return SessionConflict(
            f"session {session_id!r} changed in the store: this writer built on version {base}, "
            f"the store holds version {actual}. Reload it with store.load({session_id!r}) and "
            "apply the change again.",
            session_id,
            base,
            actual,
        )

    @staticmethod
    def _missing(session_id: str) -> SessionNotFound:
        return SessionNotFound(f"no session {session_id!r} in this store", session_id)


class InMemory(BaseStore):
    """Sessions in a dict of this process: the seam and long-term memory of
    :class:`~agentnb.session.session.MemoryStore` (which adds ``load`` and ``import_jsonl``).

    It keeps the messages' cached wire dicts by reference (they are never mutated) and
    hands out deep copies on :meth:`read`, so a commit costs no copy of the history.
    """

    name = "memory"

    def __init__(self) -> None:
        self._messages: dict[str, Records] = {}
        self._versions: dict[str, int] = {}
        self._memories: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self._memory_id = 0

    # -- long-term memory (agentnb.context.memory.MemoryBackend) -----------------------------
    def add_memory(self, user: str, item: dict[str, Any], *, cap: int | None = None) -> int:
        self._memory_id += 1
        rows = self._memories.setdefault(user, [])
        rows.append((self._memory_id, copy.deepcopy(item)))
        if cap is not None and len(rows) > cap:
            del rows[: len(rows) - cap]
        return self._memory_id

    def memory_rows(self, user: str, after: int = 0) -> list[tuple[int, dict[str, Any]]]:
        rows = self._memories.get(user, [])
        start = len(rows)
        while start and rows[start - 1][0] > after:  # ids increase: scan back from the end
            start -= 1
        return [(i, copy.deepcopy(item)) for i, item in rows[start:]]

    def memories(self, user: str) -> Records:
        return [item for _, item in self.memory_rows(user)]

    def __contains__(self, session_id: object) -> bool:
        """``session_id in store``: whether it holds the session (no read, no exception)."""
        return session_id in self._versions

    def read(self, session_id: str) -> tuple[int, Records]:
        if session_id not in self._versions:
            raise self._missing(session_id)
        return self._versions[session_id], copy.deepcopy(self._messages[session_id])

    def _check(self, session_id: str, base: int) -> int:
        actual = self._versions.get(session_id, 0)
        if actual != base:
            raise self._conflict(session_id, base, actual)
        self._versions[session_id] = actual + 1
        return actual + 1

    def commit(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        version = self._check(session_id, base)
        self._messages.setdefault(session_id, []).extend(messages)
        return version

    def rewrite(self, session_id: str, base: int, messages: Sequence[dict[str, Any]]) -> int:
        version = self._check(session_id, base)
        self._messages[session_id] = list(messages)
        return version

    def list(self) -> list[str]:
        return sorted(self._versions)

    def delete(self, session_id: str) -> None:
        if self._versions.pop(session_id, None) is None:
            raise self._missing(session_id)
        del self._messages[session_id]

    def __repr__(self) -> str:
        return f"<MemoryStore {len(self._versions)} sessions>"
