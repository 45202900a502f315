"""Chat messages in the OpenAI Chat Completions shape, as immutable pydantic models.

``session.messages`` holds these objects; ``to_openai()`` gives the exact wire dict.
Round trips are lossless: ``parse_message(d).to_openai() == d`` for any valid message dict,
unknown provider fields included. Messages are frozen, so their wire form and token
estimate are computed once and reused by every request that carries them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from itertools import combinations
from typing import Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from . import _fast, _html
from ._sdk import normalise_assistant
from .display import Shown
from .errors import InvalidMessage
from .tokens import MESSAGE_OVERHEAD, content_text, estimate_tokens

__all__ = [
    "MEMORY_NAME",
    "RUNTIME_NAME",
    "SUMMARY_NAME",
    "AssistantMessage",
    "FunctionCall",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "content_text",
    "parse_message",
]

#: The ``name`` of messages the runtime itself writes (corrections sent to the model), and of
#: the marked messages memory and summaries insert: written here once, read everywhere.
RUNTIME_NAME = "agentnb"
MEMORY_NAME = "agentnb_memory"
SUMMARY_NAME = "agentnb_summary"

Content: TypeAlias = str | tuple[dict[str, Any], ...]


class FunctionCall(BaseModel):
    """The ``function`` part of a tool call: a name and the arguments as a JSON *string*."""

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str
    arguments: str = ""

    @field_validator("arguments", mode="before")
    @classmethod
    def _arguments_as_json(cls, value: Any) -> Any:
        # Some providers send an object instead of the JSON string; normalise it.
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False)
        return value


class ToolCall(BaseModel):
    """One tool call requested by the model: ``id``, ``type="function"``, ``function``."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall

    def model_post_init(self, context: Any, /) -> None:
        # The wire format requires "type"; count it as set so it is always serialised.
        self.model_fields_set.add("type")

    @classmethod
    def make(cls, id: str, name: str, arguments: str | dict[str, Any] = "") -> ToolCall:
        """Build a call from its parts: ``ToolCall.make("call_1", "search_weather", {...})``."""
        function = FunctionCall.model_validate({"name": name, "arguments": arguments})
        return cls(id=id, function=function)

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def arguments(self) -> str:
        return self.function.arguments

    def __repr__(self) -> str:
        args = self.function.arguments
        if len(args) > 80:
            args = args[:77] + "..."
        return f"{self.function.name}({args}) #{self.id}"


class _Message(BaseModel, Shown):
    model_config = ConfigDict(frozen=True, extra="allow")

    role: str

    def __init__(self, content: Any = None, /, **data: Any) -> None:
        if content is not None:
            data["content"] = content
        super().__init__(**data)

    def wire(self) -> dict[str, Any]:
        """The cached wire dict. Shared by every request that carries this message: read only."""
        # Frozen model: caching in __dict__ is safe (model_copy drops the cache below).
        try:
            cached: dict[str, Any] = self.__dict__["_wire_cache"]
        except KeyError:
            cached = {"role": self.role}
            cached.update(_fast.dump(self))  # the fields set, by alias, JSON-ready
            self.__dict__["_wire_cache"] = cached
        return cached

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy with ``update`` applied (not validated); caches are recomputed."""
        new = super().model_copy(update=update, deep=deep)
        new.__dict__.pop("_wire_cache", None)
        new.__dict__.pop("_tokens_cache", None)
        new.__dict__.pop("_error_cache", None)
        return new

    def to_openai(self) -> dict[str, Any]:
        """This message as an OpenAI Chat Completions dict (a fresh copy, yours to change)."""
        return copy.deepcopy(self.wire())

    @property
    def text(self) -> str:
        """The text content ('' when there is none; text parts joined for multi-part content)."""
        content = self.__dict__["content"]  # a field of every message class
        if content.__class__ is str:  # the common cases first (no call)
            return content
        return "" if content is None else content_text(content)

    @property
    def tokens(self) -> int:
        """Estimated tokens this message costs in a prompt (see :mod:`agentnb.tokens`)."""
        try:
            tokens: int = self.__dict__["_tokens_cache"]
        except KeyError:
            text = self.__dict__["content"]  # what .text gives, without the call
            if text.__class__ is not str:
                text = "" if text is None else content_text(text)
            calls = self.__dict__.get("tool_calls")
            if calls:  # counted as one text: names and arguments are what the model reads
                text += "".join([c.function.name + c.function.arguments for c in calls])
            tokens = self.__dict__["_tokens_cache"] = MESSAGE_OVERHEAD + estimate_tokens(text)
        return tokens

    def __repr__(self) -> str:
        text = self.text.replace("\n", " ")
        if len(text) > 70:
            text = text[:67] + "..."
        parts = [repr(text)] if text or not self.__dict__.get("tool_calls") else []
        extra = self._repr_extra()
        if extra:
            parts.append(extra)
        return f"{type(self).__name__}({', '.join(parts)})"

    def _repr_extra(self) -> str:
        return ""

    def static_html(self) -> str:
        """The message as an escaped card (its repr is its text/plain)."""
        return _html.message_card(self.wire())


class SystemMessage(_Message):
    """Instructions: ``{"role": "system", "content": ...}``."""

    role: Literal["system", "developer"] = "system"
    content: Content
    name: str | None = None


class UserMessage(_Message):
    """What the user said: ``{"role": "user", "content": ...}``."""

    role: Literal["user"] = "user"
    content: Content
    name: str | None = None


class AssistantMessage(_Message):
    """The model's turn: text, tool calls, or both. ``content`` may be null with tool calls."""

    role: Literal["assistant"] = "assistant"
    content: Content | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    name: str | None = None
    refusal: str | None = None
    #: Reasoning text some servers return beside the answer (DeepSeek, llama.cpp).
    reasoning_content: str | None = None

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The tool calls (empty tuple when there are none)."""
        return self.tool_calls or ()

    def _repr_extra(self) -> str:
        if not self.tool_calls:
            return ""
        return "tool_calls=[" + ", ".join(repr(c) for c in self.tool_calls) + "]"


class ToolMessage(_Message):
    """A tool's result, answering the call whose id is ``tool_call_id``."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: Content = ""
    name: str | None = None

    @classmethod
    def answer(cls, tool_call_id: str, name: str, content: str) -> ToolMessage:
        """The runtime's constructor, with the wire form filled in at once.

        Its three fields are text by construction (anything else is validated as usual).
        """
        if type(tool_call_id) is not str or type(name) is not str or type(content) is not str:
            message = cls(tool_call_id=tool_call_id, name=name, content=content)
        else:
            fields = {"role": "tool", "tool_call_id": tool_call_id, "content": content}
            fields["name"] = name
            message = _built(cls, fields, _GIVEN_ANSWER)
        cache = message.__dict__
        cache["_wire_cache"] = {
            "role": "tool",
            "tool_call_id": tool_call_id,
            "name": name,
            "content": content,
        }
        cache["_tokens_cache"] = MESSAGE_OVERHEAD + estimate_tokens(content)
        return message

    def _repr_extra(self) -> str:
        return f"tool_call_id={self.tool_call_id!r}" + (
            f", name={self.name!r}" if self.name else ""
        )

    @property
    def ok(self) -> bool:
        """False when the content is agentnb's structured error (``{"ok": false, ...}``)."""
        return self.error is None

    @property
    def kind(self) -> str | None:
        """The error's machine-readable ``kind`` (``timeout``, ``unknown_tool``, ...), or None."""
        error = self.error
        return None if error is None else str(error.get("kind") or "tool_error")

    @property
    def error(self) -> dict[str, Any] | None:
        """The structured error this result carries, or None for a successful result."""
        cached = self.__dict__.get("_error_cache", False)
        if cached is not False:
            return cached  # type: ignore[no-any-return]
        from .tools.results import read_error  # the shape is written and read in tools/

        error = self.__dict__["_error_cache"] = read_error(self.text)
        return error


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage

_BY_ROLE: dict[str, type[_Message]] = {
    "system": SystemMessage,
    "developer": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool": ToolMessage,
}


_built = _fast.built  # a message from fields known to be valid (no validation)
_REPLY_KEYS = frozenset(("role", "content", "tool_calls"))
_CALL_KEYS = frozenset(("id", "type", "function"))
_FUNCTION_KEYS = frozenset(("name", "arguments"))
# The field-name sets of built messages, shared by them (read only: see agentnb._fast.built).
_GIVEN_CALL, _GIVEN_FUNCTION, _GIVEN_TEXT = set(_CALL_KEYS), set(_FUNCTION_KEYS), {"content"}
_GIVEN_ANSWER = {"tool_call_id", "content", "name"}
_GIVEN_REPLY = {  # one per set of keys a reply in the common shape can have
    frozenset(keys): set(keys) for n in range(4) for keys in combinations(sorted(_REPLY_KEYS), n)
}


def reply_message(value: dict[str, Any]) -> AssistantMessage | None:
    """The assistant message of a reply dict in the common shape, built without validation.

    The common shape: ``role``, ``content`` (text or null) and ``tool_calls`` (a list of
    ``{"id", "type": "function", "function": {"name", "arguments"}}`` with text values), and
    nothing else. Anything else returns None, and the caller validates it as usual.
    """
    content = value.get("content")
    if not value.keys() <= _REPLY_KEYS or (content is not None and type(content) is not str):
        return None
    given = _GIVEN_REPLY[frozenset(value)]
    raw = value.get("tool_calls")
    if raw is None:
        if "tool_calls" in given or content is None:
            return None  # a null field or an empty reply: normalised or refused on the slow path
        fields = {"role": "assistant", "content": content, "tool_calls": None, **_NO_EXTRAS}
        message = _built(AssistantMessage, fields, given)
        message.__dict__["_wire_cache"] = {"role": "assistant", "content": content}
        return message
    if type(raw) is not list or not raw:
        return None
    calls, wires = [], []
    for call in raw:
        function = call.get("function") if type(call) is dict else None
        if (
            type(function) is not dict
            or call.keys() != _CALL_KEYS
            or call["type"] != "function"
            or function.keys() != _FUNCTION_KEYS
        ):
            return None
        cid, name, arguments = call["id"], function["name"], function["arguments"]
        if type(cid) is not str or type(name) is not str or type(arguments) is not str:
            return None
        fn = _built(FunctionCall, {"name": name, "arguments": arguments}, _GIVEN_FUNCTION)
        calls.append(_built(ToolCall, {"id": cid, "type": "function", "function": fn}, _GIVEN_CALL))
        wires.append(
            {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}
        )
    fields = {"role": "assistant", "content": content, "tool_calls": tuple(calls), **_NO_EXTRAS}
    message = _built(AssistantMessage, fields, given)
    wire: dict[str, Any] = {"role": "assistant"}
    if "content" in given:
        wire["content"] = content
    wire["tool_calls"] = wires
    message.__dict__["_wire_cache"] = wire
    return message


_NO_EXTRAS: dict[str, Any] = {"name": None, "refusal": None, "reasoning_content": None}


_T = TypeVar("_T", "UserMessage", "AssistantMessage")


def text_message(cls: type[_T], content: str) -> _T:
    """What ``cls(content=content)`` builds for text ``content``, without validation: the
    runtime's constructor of run inputs and text replies (``UserMessage``, ``AssistantMessage``)."""
    if type(content) is not str:
        return cls(content=content)
    fields = {**_DEFAULTS[cls], "content": content}
    message = _built(cls, fields, _GIVEN_TEXT)
    message.__dict__["_wire_cache"] = {"role": fields["role"], "content": content}
    return message


_DEFAULTS: dict[type[_Message], dict[str, Any]] = {
    cls: {name: field.default for name, field in cls.model_fields.items()}
    for cls in (UserMessage, AssistantMessage)
}


def parse_message(value: Message | dict[str, Any], *, where: str = "message") -> Message:
    """Validate a dict (or pass a message object through) into a message object.

    Raises :class:`~agentnb.errors.InvalidMessage` naming the field that is wrong.
    """
    if isinstance(value, _Message):
        return value
    if not isinstance(value, dict):
        raise InvalidMessage(
            f"{where} must be a dict like {{'role': 'user', 'content': '...'}} or a message "
            f"object, not {type(value).__name__}"
        )
    role = value.get("role")
    cls = _BY_ROLE.get(role) if isinstance(role, str) else None
    if cls is None:
        raise InvalidMessage(
            f"{where} has role {role!r}; expected one of 'system', 'user', 'assistant', 'tool'"
        )
    if role == "assistant":
        value = normalise_assistant(value)
    try:
        message = cls.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'message'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InvalidMessage(f"{where} is not a valid {role!r} message: {problems}") from None
    return message  # type: ignore[return-value]
