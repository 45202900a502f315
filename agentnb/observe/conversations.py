"""Conversation threading: which conversation a proxied request belongs to, without code changes.

What the client says comes first, then what the request carries:

1. **explicit ids**: a header naming the session (ours, ``x-session-id``; the client-native
   ones of :data:`ID_HEADERS`: Claude Code, opencode, Codex, gateways) or a body field
   (``prompt_cache_key``, ``metadata.session_id``): the request joins that id's
   conversations, and is threaded among them only;
2. **a response it continues** (Responses API ``previous_response_id``): the history is the
   upstream's, so the request continues exactly the conversation holding that response - or
   branches from it, when that conversation has moved on; a request adding to a conversation
   the upstream keeps (the Responses API's ``conversation``) continues that id's session;
3. **the longest message prefix**: a request whose messages begin with all of a
   conversation's messages (and add at least one) continues it. System messages match by
   position, not by text: an app whose system prompt carries the current time stays one
   conversation, and the changed prompt is recorded as an edit of the session;
4. a request sharing a prefix with a conversation and then differing (an edited turn, a
   regenerated reply) is a **branch**: a new session forked at the shared prefix. Never a
   merge. A shared prefix of system messages only is not a branch;
5. a request that continues nothing: under an explicit id that already has conversations, or
   carrying later turns of one (its summary replaced the earlier ones), it is a
   **compaction**: a new session linked to the one it compacted; one that starts mid-way
   (with a reply or a tool result, or after a response the proxy never saw) is labelled
   **unthreaded**; anything else is a new conversation.

The same request again after an error reply is a retry and stays in its conversation. A
conversation waiting for its reply is not continued by another request (two conversations
with identical openings sent at once stay apart).

Messages compare by a canonical key (role, text, tool calls with their arguments as parsed
JSON, ``tool_call_id``), so the app re-sending a reply with ``content: ""`` for ``null``,
reordered JSON keys or the SDK's null fields still continues its conversation. Reasoning is
not in the key, and neither is reasoning a client re-sends as text, since that is all it can
keep of reasoning that came unsigned (pydantic-ai writes it as ``<think>`` text on the
Responses API, and as ``<assistant_thinking>`` text on Anthropic, which the codec folds back
into the assistant turn): an assistant's text compares without its tagged thinking. Placing a
request costs one dictionary lookup per message it carries, however many conversations
there are: every conversation's key sequence is indexed by its running hash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..session import Session
from ..tokens import content_text

__all__ = [
    "ID_HEADERS",
    "Conversation",
    "Conversations",
    "Placement",
    "canonical",
    "explicit_id",
]

#: Headers that name a conversation, first match wins: ours, the client-native ones (Claude
#: Code, opencode, Codex, session-affinity routers), then those of Helicone, LiteLLM,
#: Langfuse and Portkey-style gateways.
ID_HEADERS = (
    "x-session-id",
    "x-claude-code-session-id",
    "x-opencode-session",
    "x-session-affinity",
    "session-id",
    "session_id",
    "thread-id",
    "thread_id",
    "conversation_id",
    "x-conversation-id",
    "helicone-session-id",
    "x-litellm-session-id",
    "langfuse-session-id",
    "x-trace-session-id",
)
_SYSTEM = frozenset(("system", "developer"))
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:-]+")
#: Reasoning re-sent as tagged text inside an assistant's text (compared without it).
_THINKING_TEXT = re.compile(r"\s*<(think|thinking|assistant_thinking)>.*?</\1>\s*", re.S)
#: How a conversation came to be (``Conversation.how``).
HOWS = ("new", "branch", "compaction", "unthreaded")


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
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") == "text" for p in content
    ):
        return content_text(content)  # text parts compare as the text they hold
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
    text = _text(message.get("content"))
    if role == "assistant" and isinstance(text, str) and "<" in text:
        text = _THINKING_TEXT.sub("", text)
    key = [
        "system" if role == "developer" else role,
        text,
        calls,
        message.get("tool_call_id") or "",
    ]
    return json.dumps(key, ensure_ascii=False, sort_keys=True, default=str)


def explicit_id(
    headers: Mapping[str, str], ids: Sequence[str] = (), cache_key: str | None = None
) -> tuple[str | None, bool]:
    """The conversation id the client sent, if any, and whether it names one *session*:
    :data:`ID_HEADERS` first, then the body's ``metadata`` ids, then ``prompt_cache_key``
    (which an app may set once for all its conversations: it groups them, but a new
    conversation under it is not taken for a compaction)."""
    for name in ID_HEADERS:
        value = headers.get(name)
        if value:
            return value, True
    if ids:
        return ids[0], True
    return cache_key, False


def _session_id(text: str) -> str:
    cleaned = _UNSAFE.sub("-", text).strip("-._:")[:120]
    return cleaned or "session"


def _is_system(message: Mapping[str, Any]) -> bool:
    return message.get("role") in _SYSTEM


@dataclass(eq=False)
class Conversation:
    """One conversation: its session, the keys of its messages, how it began, whether it waits."""

    session: Session
    keys: list[str] = field(default_factory=list)
    explicit: str | None = None
    #: How it came to be: ``new``, ``branch``, ``compaction`` or ``unthreaded`` (``note`` says
    #: why in words; ``parent`` is the session it branched from or compacted).
    how: str = "new"
    parent: str | None = None
    note: str = ""
    busy: bool = False
    #: The APIs its calls came in on (``chat``, ``responses``, ``anthropic``), in order.
    apis: list[str] = field(default_factory=list)
    #: The last request got no reply (an error): the same request again is a retry.
    unanswered: bool = False
    #: The running hash of ``keys`` (system messages by position only), one per message.
    hashes: list[int] = field(default_factory=list, repr=False)
    #: What the app sent last (its messages or items, and its tools): later requests share
    #: the objects that did not change, so a call keeps only what is new.
    sent: list[Any] = field(default_factory=list, repr=False)
    tools: Any = field(default=None, repr=False)
    #: ``tools`` in the Chat Completions shape, made once per distinct list.
    schemas: list[dict[str, Any]] = field(default_factory=list, repr=False)


@dataclass(frozen=True)
class Placement:
    """Where a request goes: its conversation, and the first of its messages that is new.

    ``edits`` are the system messages (index, message) whose text changed: the recorder
    records them as edits of the session before appending the rest.
    """

    conversation: Conversation
    start: int
    new: bool = False
    edits: tuple[tuple[int, dict[str, Any]], ...] = ()


class Conversations:
    """Every conversation seen so far, indexed, and the rule that places each new request."""

    def __init__(self) -> None:
        self.conversations: list[Conversation] = []
        self._ids: set[str] = set()
        self._full: dict[int, list[Conversation]] = {}  # hash of all its keys -> conversations
        self._prefix: dict[int, Conversation] = {}  # hash of a prefix -> the first one with it
        self._responses: dict[str, tuple[Conversation, int]] = {}  # response id -> where
        self._replies: dict[str, Conversation] = {}  # an assistant message's key -> its latest
        self._families: dict[str | None, list[Conversation]] = {}

    # -- hashing -------------------------------------------------------------------------
    @staticmethod
    def _chain(seed: int, messages: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> list[int]:
        out, h = [], seed
        for message, key in zip(messages, keys, strict=True):
            h = hash((h, "system" if _is_system(message) else key))
            out.append(h)
        return out

    @staticmethod
    def _seed(explicit: str | None) -> int:
        return hash(("agentnb-conversation", explicit))

    # -- placing ---------------------------------------------------------------------------
    def place(
        self,
        messages: Sequence[Mapping[str, Any]],
        explicit: str | None = None,
        previous_response: str | None = None,
        *,
        scoped: bool = True,
        upstream: str | None = None,
    ) -> Placement:
        """The conversation of a request carrying ``messages``; makes one when needed.

        The caller appends ``messages[start:]`` to its session (and later the reply), then
        calls :meth:`grow`. With ``previous_response``, ``messages`` are only the new ones
        (the upstream holds the history) and are appended at the conversation's end; so with
        ``upstream``, the id of a conversation the upstream keeps (the Responses API's
        ``conversation``). ``scoped``: ``explicit`` names one client session
        (see :func:`explicit_id`).
        """
        if previous_response is not None:
            return self._after_response(messages, explicit, previous_response)
        if upstream is not None:
            return self._in_upstream(messages, upstream)
        keys = [canonical(m) for m in messages]
        hashes = self._chain(self._seed(explicit), messages, keys)
        n = len(keys)
        for c in self._full.get(hashes[-1], ()) if n else ():
            if not c.busy and c.unanswered and len(c.keys) == n and self._same(c, messages, keys):
                return Placement(c, n, edits=self._edits(c, messages, keys, n))  # a retry
        for j in range(n - 1, 0, -1):
            for c in self._full.get(hashes[j - 1], ()):
                if not c.busy and len(c.keys) == j and self._same(c, messages[:j], keys[:j]):
                    return Placement(c, j, edits=self._edits(c, messages, keys, j))
        for j in range(n, 0, -1):
            parent = self._prefix.get(hashes[j - 1])
            if parent is None or not self._same(parent, messages[:j], keys[:j]):
                continue
            if not any(not _is_system(m) for m in messages[:j]):
                break  # a shared system prompt is not a branch
            child = self._fork(
                parent,
                j,
                explicit,
                "branch",
                f"branched from {parent.session.id} after message {j - 1}",
            )
            return Placement(child, j, True, self._edits(child, messages, keys, j))
        return Placement(self._start(messages, keys, explicit, scoped), 0, True)

    def _same(
        self, c: Conversation, messages: Sequence[Mapping[str, Any]], keys: Sequence[str]
    ) -> bool:
        """Whether ``c`` begins with ``messages`` (system messages by position only)."""
        for m, key, theirs in zip(messages, keys, c.keys, strict=False):
            if key != theirs and not (_is_system(m) and theirs.startswith('["system"')):
                return False
        return len(c.keys) >= len(keys)

    @staticmethod
    def _edits(
        c: Conversation, messages: Sequence[Mapping[str, Any]], keys: Sequence[str], upto: int
    ) -> tuple[tuple[int, dict[str, Any]], ...]:
        return tuple(
            (i, dict(messages[i]))
            for i in range(min(upto, len(c.keys)))
            if _is_system(messages[i]) and keys[i] != c.keys[i]
        )

    def _start(
        self,
        messages: Sequence[Mapping[str, Any]],
        keys: Sequence[str],
        explicit: str | None,
        scoped: bool,
    ) -> Conversation:
        """A conversation that continues nothing: new, a compaction, or unthreaded."""
        family = self._families.get(explicit, [])
        how, parent, note = "new", None, ""
        if explicit is not None and scoped and family:
            parent = family[-1].session.id
            how, note = (
                "compaction",
                (
                    f"the client's session {explicit!r} went on without the earlier turns of "
                    f"{parent}: a compaction (or a cleared context)"
                ),
            )
        else:
            for m, key in zip(messages, keys, strict=True):
                earlier = self._replies.get(key) if m.get("role") == "assistant" else None
                if earlier is not None:
                    how, parent = "compaction", earlier.session.id
                    note = f"it carries later turns of {parent} without the earlier ones"
                    break
        if how == "new":
            first = next((m for m in messages if not _is_system(m)), None)
            if first is not None and first.get("role") in ("assistant", "tool"):
                how = "unthreaded"
                note = (
                    f"it begins with a {first.get('role')} message: the conversation started "
                    "before the proxy saw it"
                )
        session = Session(id=self._new_id(explicit))
        return self._add(Conversation(session, [], explicit, how, parent, note))

    def _after_response(
        self, messages: Sequence[Mapping[str, Any]], explicit: str | None, response: str
    ) -> Placement:
        found = self._responses.get(response)
        if found is None:
            session = Session(id=self._new_id(explicit))
            note = (
                f"previous_response_id {response!r} was not seen by this proxy (made before "
                "it started, or with store: false): the history before it is unknown"
            )
            return Placement(
                self._add(Conversation(session, [], explicit, "unthreaded", None, note)), 0, True
            )
        c, at = found
        new = False
        if c.busy or len(c.keys) != at:
            c = self._fork(
                c, at, explicit, "branch", f"continues response {response} of {c.session.id}"
            )
            new = True
        return self._continued(c, messages, new)

    def _in_upstream(self, messages: Sequence[Mapping[str, Any]], upstream: str) -> Placement:
        """A request adding to a conversation the upstream keeps: that id's latest session."""
        family = self._families.get(upstream, [])
        if not family:
            note = (
                f"the upstream's conversation {upstream!r} may hold items from before this "
                "proxy saw it"
            )
            session = Session(id=self._new_id(upstream))
            c = self._add(Conversation(session, [], upstream, "new", None, note))
            return Placement(c, 0, True)
        c, new = family[-1], False
        if c.busy:
            c, new = self.branch(c, f"it came while {c.session.id} waited for its reply"), True
        return self._continued(c, messages, new)

    def _continued(
        self, c: Conversation, messages: Sequence[Mapping[str, Any]], new: bool
    ) -> Placement:
        """``messages`` go at ``c``'s end; instructions sent again are its first message."""
        if messages and _is_system(messages[0]) and c.keys and c.keys[0].startswith('["system"'):
            # instructions come again with every request: the conversation's first message
            key = canonical(messages[0])
            edits = ((0, dict(messages[0])),) if key != c.keys[0] else ()
            return Placement(c, 1, new, edits)
        return Placement(c, 0, new)

    def branch(self, c: Conversation, why: str) -> Conversation:
        """A branch of all of ``c`` (a request that may not write into ``c`` itself)."""
        return self._fork(
            c, len(c.keys), c.explicit, "branch", f"branched from {c.session.id}: " + why
        )

    def _fork(
        self, parent: Conversation, at: int, explicit: str | None, how: str, note: str
    ) -> Conversation:
        session = parent.session.fork(at, id=self._new_id(explicit))
        child = Conversation(session, parent.keys[:at], explicit, how, parent.session.id, note)
        child.hashes = parent.hashes[:at]
        child.sent, child.tools, child.schemas = parent.sent, parent.tools, parent.schemas
        return self._add(child)

    # -- growing -----------------------------------------------------------------------------
    def grow(self, c: Conversation, messages: Sequence[Mapping[str, Any]]) -> None:
        """``messages`` were appended to ``c``'s session: index them."""
        if not messages:
            return
        keys = [canonical(m) for m in messages]
        seed = c.hashes[-1] if c.hashes else self._seed(c.explicit)
        hashes = self._chain(seed, messages, keys)
        self._unindex_full(c)
        c.keys += keys
        c.hashes += hashes
        self._full.setdefault(c.hashes[-1], []).append(c)
        for h in hashes:
            self._prefix.setdefault(h, c)
        for m, key in zip(messages, keys, strict=True):
            if m.get("role") == "assistant":
                self._replies[key] = c

    def edited(self, c: Conversation, index: int, message: Mapping[str, Any]) -> None:
        """A system message of ``c`` was replaced (its hash is positional: only the key)."""
        c.keys[index] = canonical(message)

    def answered(self, c: Conversation, response_id: str | None) -> None:
        """``c`` got a reply with ``response_id``: a later request may continue from it."""
        if response_id:
            self._responses[response_id] = (c, len(c.keys))

    def _unindex_full(self, c: Conversation) -> None:
        if c.hashes:
            same = self._full.get(c.hashes[-1], [])
            if c in same:
                same.remove(c)
            if not same:
                self._full.pop(c.hashes[-1], None)

    def discard(self, c: Conversation) -> None:
        """Forget a conversation just made for a request that turned out unreadable."""
        self.conversations.remove(c)
        self._ids.discard(c.session.id)
        self._families.get(c.explicit, []).remove(c)
        self._unindex_full(c)
        for h in c.hashes:
            if self._prefix.get(h) is c:
                del self._prefix[h]

    # -- ids -------------------------------------------------------------------------------
    def _new_id(self, explicit: str | None) -> str | None:
        if explicit is None:
            return None
        base = _session_id(explicit)
        n, candidate = 1, base
        while candidate in self._ids:
            n += 1
            candidate = f"{base}.b{n}"
        return candidate

    def _add(self, c: Conversation) -> Conversation:
        self.conversations.append(c)
        self._ids.add(c.session.id)
        self._families.setdefault(c.explicit, []).append(c)
        if c.hashes:
            self._full.setdefault(c.hashes[-1], []).append(c)
        return c
