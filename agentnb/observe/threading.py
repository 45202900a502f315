"""Conversation threading: which conversation a proxied request belongs to, without code changes.

An app talking Chat Completions sends its whole history every time, so a request names its
conversation by what it carries. In order:

1. an explicit id, when the app sends one (an ``x-session-id`` header or one of the headers
   and body fields other tools read, see :data:`ID_HEADERS`): the request joins that id's
   conversations;
2. else the **longest canonical-message prefix**: a request whose messages begin with all of a
   conversation's messages (and add at least one) continues it;
3. a request that shares a prefix with a conversation but then differs - an edited turn, a
   regenerated reply, a second conversation with the same opening - is a **branch**: a new
   session forked from that one at the shared prefix (``forked_from``). Never a merge.

The same request again after an error reply is a retry and stays in its conversation.
A conversation waiting for its reply is not continued by another request (two conversations
with identical openings sent at once stay apart). A shared prefix of only system messages
is not a branch: most apps start every conversation with the same instructions.

Messages compare by a canonical key (role, text, tool calls with their arguments as parsed
JSON, ``tool_call_id``), so the app re-sending a reply with ``content: ""`` for ``null``,
reordered JSON keys or the SDK's null fields still continues its conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..session import Session

__all__ = ["ID_HEADERS", "Placement", "Thread", "Threads", "canonical", "explicit_id"]

#: Headers that name a conversation, first match wins: ours, then those of Helicone,
#: LiteLLM, Langfuse and Portkey-style gateways.
ID_HEADERS = (
    "x-session-id",
    "x-conversation-id",
    "helicone-session-id",
    "x-litellm-session-id",
    "langfuse-session-id",
    "x-trace-session-id",
)
_SYSTEM = frozenset(("system", "developer"))
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]+")


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _text(content: Any) -> Any:
    if content is None:
        return ""
    if isinstance(content, list):
        if all(isinstance(p, Mapping) and p.get("type") == "text" for p in content):
            return "".join(str(p.get("text", "")) for p in content)
        return content
    return content


def canonical(message: Mapping[str, Any]) -> str:
    """The key two messages compare by: the same key means the same turn of a conversation."""
    role = message.get("role")
    calls = [
        [
            call.get("id") or "",
            (call.get("function") or {}).get("name") or "",
            _arguments((call.get("function") or {}).get("arguments")),
        ]
        for call in message.get("tool_calls") or ()
        if isinstance(call, Mapping)
    ]
    key = [
        "system" if role == "developer" else role,
        _text(message.get("content")),
        calls,
        message.get("tool_call_id") or "",
    ]
    return json.dumps(key, ensure_ascii=False, sort_keys=True, default=str)


def explicit_id(headers: Mapping[str, str], body: Mapping[str, Any]) -> str | None:
    """The conversation id the app sent, if any (headers first, then ``metadata``/``user``)."""
    for name in ID_HEADERS:
        value = headers.get(name)
        if value:
            return value
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping):
        for name in ("session_id", "conversation_id", "thread_id"):
            value = metadata.get(name)
            if isinstance(value, str) and value:
                return value
    return None


def _session_id(text: str) -> str:
    cleaned = _UNSAFE.sub("-", text).strip("-._:")[:120]
    return cleaned or "session"


@dataclass(eq=False)
class Thread:
    """One conversation: its session, the canonical keys of its messages, whether it waits."""

    session: Session
    keys: list[str] = field(default_factory=list)
    explicit: str | None = None
    busy: bool = False
    #: The last request got no reply (an error): the same request again is a retry, not a branch.
    unanswered: bool = False


@dataclass(frozen=True)
class Placement:
    """Where a request goes: its thread, the first message it adds, and the fork's origin."""

    thread: Thread
    start: int
    forked_from: Thread | None = None
    new: bool = False


def _common(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Threads:
    """Every conversation seen so far, and the rule that places each new request."""

    def __init__(self) -> None:
        self.threads: list[Thread] = []
        self._ids: set[str] = set()

    def _new_id(self, explicit: str | None) -> str | None:
        if explicit is None:
            return None
        base = _session_id(explicit)
        n, candidate = 1, base
        while candidate in self._ids:
            n += 1
            candidate = f"{base}.b{n}"
        return candidate

    def place(
        self, messages: Sequence[Mapping[str, Any]], explicit: str | None = None
    ) -> Placement:
        """The thread of a request carrying ``messages``; forks a new one when needed.

        The caller appends ``messages[start:]`` (and later the reply) to the thread.
        """
        keys = [canonical(m) for m in messages]
        family = [t for t in self.threads if t.explicit == explicit]
        extend: Thread | None = None
        for t in family:
            n = len(t.keys)
            if not t.busy and t.unanswered and keys == t.keys:
                return Placement(t, n)  # the app retries a call that failed
            if t.busy or n >= len(keys) or keys[:n] != t.keys:
                continue
            if extend is None or n > len(extend.keys):
                extend = t
        if extend is not None:
            return Placement(extend, len(extend.keys))
        parent: Thread | None = None
        shared = 0
        for t in family:
            c = _common(t.keys, keys)
            if c > shared:
                parent, shared = t, c
        if parent is not None and any(m.get("role") not in _SYSTEM for m in messages[:shared]):
            session = parent.session.fork(shared, id=self._new_id(explicit))
            thread = self._add(Thread(session, keys[:shared], explicit))
            return Placement(thread, shared, parent, new=True)
        thread = self._add(Thread(Session(id=self._new_id(explicit)), [], explicit))
        return Placement(thread, 0, new=True)

    def discard(self, thread: Thread) -> None:
        """Forget a thread just made for a request that turned out unreadable."""
        self.threads.remove(thread)
        self._ids.discard(thread.session.id)

    def _add(self, thread: Thread) -> Thread:
        self.threads.append(thread)
        self._ids.add(thread.session.id)
        return thread
