"""The model protocol: what the runtime sends (ModelRequest) and gets back (ModelResponse).

A model is any object with ``name``, ``streaming`` and ``async complete(request)``; a
streaming model also has ``stream(request)``, an async iterator of :class:`Delta`.
Subclass :class:`Model` to get a ``stream`` that splits ``complete``'s reply into deltas.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidMessage, ModelResponseError
from ..messages import AssistantMessage, FunctionCall, ToolCall, parse_message

__all__ = [
    "Delta",
    "Model",
    "ModelLike",
    "ModelRequest",
    "ModelResponse",
    "ReplyAssembler",
    "RequestDiff",
    "Usage",
    "coerce_response",
    "split_response",
]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call (or a sum). ``estimated`` when the model gave none."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.estimated or other.estimated,
        )

    @classmethod
    def from_openai(cls, data: dict[str, Any] | None) -> Usage | None:
        if not data:
            return None
        prompt = int(data.get("prompt_tokens") or 0)
        completion = int(data.get("completion_tokens") or 0)
        return cls(prompt, completion, int(data.get("total_tokens") or prompt + completion))


@dataclass(frozen=True, slots=True)
class RequestDiff:
    """What changed between two requests: the messages after their common prefix, etc."""

    common: int
    removed: list[dict[str, Any]]
    added: list[dict[str, Any]]
    instructions_changed: bool
    tools_changed: bool
    params_changed: dict[str, tuple[Any, Any]]

    def __repr__(self) -> str:
        bits = [f"common={self.common}", f"+{len(self.added)} messages"]
        if self.removed:
            bits.append(f"-{len(self.removed)} messages")
        if self.instructions_changed:
            bits.append("instructions changed")
        if self.tools_changed:
            bits.append("tools changed")
        if self.params_changed:
            bits.append(f"params changed: {sorted(self.params_changed)}")
        return f"RequestDiff({', '.join(bits)})"


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """The exact request of one model call, in the Chat Completions shape.

    ``messages`` and ``tools`` are the wire dicts the model receives; they are shared with
    the session's cached messages, so treat them as read only (``to_openai()`` copies).
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def to_openai(self) -> dict[str, Any]:
        """The request body (without ``model``), as a fresh JSON-ready dict."""
        body: dict[str, Any] = {"messages": json.loads(json.dumps(self.messages))}
        if self.tools:
            body["tools"] = json.loads(json.dumps(self.tools))
        body.update(self.params)
        return body

    @property
    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                c = m.get("content")
                return c if isinstance(c, str) else json.dumps(c, ensure_ascii=False)
        return ""

    def diff(self, newer: ModelRequest) -> RequestDiff:
        """Compare with a later request: which messages are new, what else changed."""
        a, b = self.messages, newer.messages
        start = 1 if a and b and a[0].get("role") == b[0].get("role") == "system" else 0
        i = start
        while i < len(a) and i < len(b) and (a[i] is b[i] or a[i] == b[i]):
            i += 1
        keys = set(self.params) | set(newer.params)
        params = {
            k: (self.params.get(k), newer.params.get(k))
            for k in sorted(keys)
            if self.params.get(k) != newer.params.get(k)
        }
        return RequestDiff(
            common=i,
            removed=a[i:],
            added=b[i:],
            instructions_changed=start == 1 and a[0] != b[0],
            tools_changed=self.tools != newer.tools,
            params_changed=params,
        )


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One reply: the assistant message plus usage, finish reason and the raw payload."""

    message: AssistantMessage
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None
    raw: dict[str, Any] | None = None
    #: What the model client repaired on the way in, in words (e.g. a tool call written as
    #: text turned into a real call). ``decide`` reports them in ``Decided.problems``.
    repairs: tuple[str, ...] = ()
    #: When set, the reply was unusable: ``decide`` appends it, then this text as a correction
    #: message (``name="agentnb"``) for the model, and the loop goes on.
    correction: str | None = None


@dataclass(frozen=True, slots=True)
class Delta:
    """One streamed fragment: text, reasoning, or a piece of a tool call's arguments."""

    text: str = ""
    reasoning: str = ""
    tool_index: int | None = None
    tool_id: str | None = None
    tool_name: str | None = None
    arguments: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    #: The provider's chunk exactly as received (an SSE ``data:`` payload), when there is one.
    raw: str | None = None


class ReplyAssembler:
    """Accumulates :class:`Delta` fragments into a :class:`ModelResponse`.

    Tool-call names are *set* (some servers repeat the full name in every chunk), argument
    fragments are appended, ids are kept from the first chunk that has one.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def add(self, delta: Delta) -> None:
        if delta.text:
            self.text.append(delta.text)
        if delta.reasoning:
            self.reasoning.append(delta.reasoning)
        if delta.tool_index is not None:
            call = self.calls.setdefault(delta.tool_index, {"id": "", "name": "", "args": []})
            if delta.tool_id and not call["id"]:
                call["id"] = delta.tool_id
            if delta.tool_name:
                call["name"] = delta.tool_name
            if delta.arguments:
                call["args"].append(delta.arguments)
        if delta.finish_reason:
            self.finish_reason = delta.finish_reason
        if delta.usage:
            self.usage = delta.usage

    def result(self, model: str | None = None) -> ModelResponse:
        calls = tuple(
            ToolCall(
                id=c["id"], function=FunctionCall(name=c["name"], arguments="".join(c["args"]))
            )
            for _, c in sorted(self.calls.items())
        )
        text = "".join(self.text)
        fields: dict[str, Any] = {"content": text if text or not calls else None}
        if calls:
            fields["tool_calls"] = calls
        if self.reasoning:
            fields["reasoning_content"] = "".join(self.reasoning)
        message = AssistantMessage(**fields)
        return ModelResponse(message, self.usage, self.finish_reason, model)


def split_response(response: ModelResponse, size: int = 12) -> Iterator[Delta]:
    """Split a whole reply into deltas of about ``size`` characters (for streaming doubles)."""
    msg = response.message
    for start in range(0, len(msg.reasoning_content or ""), size):
        yield Delta(reasoning=(msg.reasoning_content or "")[start : start + size])
    text = msg.text
    for start in range(0, len(text), size):
        yield Delta(text=text[start : start + size])
    for i, call in enumerate(msg.calls):
        args = call.function.arguments
        yield Delta(tool_index=i, tool_id=call.id, tool_name=call.function.name)
        for start in range(0, len(args), size):
            yield Delta(tool_index=i, arguments=args[start : start + size])
    yield Delta(finish_reason=response.finish_reason, usage=response.usage)


def coerce_response(value: Any, model: str | None = None) -> ModelResponse:
    """Accept the reply forms test doubles allow and return a :class:`ModelResponse`.

    A ``ModelResponse``; an ``AssistantMessage``; a plain string (a text answer); an
    assistant-message dict; or a whole Chat Completions response dict (``choices[0]``).
    """
    if isinstance(value, ModelResponse):
        return value
    if isinstance(value, AssistantMessage):
        finish = "tool_calls" if value.tool_calls else "stop"
        return ModelResponse(value, None, finish, model)
    if isinstance(value, str):
        return ModelResponse(AssistantMessage(content=value), None, "stop", model)
    if isinstance(value, dict) and "choices" in value:
        try:
            choice = value["choices"][0]
            message = dict(choice["message"])
        except (KeyError, IndexError, TypeError):
            raise ModelResponseError(
                "the completion has no choices[0].message; got keys "
                f"{sorted(value)} (is this an error body?)"
            ) from None
        message.setdefault("role", "assistant")
        inner = coerce_response(message, model)
        return ModelResponse(
            inner.message,
            Usage.from_openai(value.get("usage")),
            choice.get("finish_reason") or inner.finish_reason,
            value.get("model") or model,
            value,
        )
    if isinstance(value, dict):
        data = value if "role" in value else {"role": "assistant", **value}
        if data.get("role") != "assistant":
            raise ModelResponseError(
                f"a model reply must be an assistant message, got role {data.get('role')!r}"
            )
        try:
            parsed = parse_message(data, where="model reply")
        except InvalidMessage as exc:
            raise ModelResponseError(str(exc)) from None
        assert isinstance(parsed, AssistantMessage)
        return coerce_response(parsed, model)
    raise ModelResponseError(
        f"cannot use a {type(value).__name__} as a model reply; give a string, an assistant "
        "message dict, an AssistantMessage or a ModelResponse"
    )


@runtime_checkable
class ModelLike(Protocol):
    """What the runtime needs of a model."""

    name: str
    streaming: bool

    async def complete(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[Delta]: ...


class Model:
    """Base class for models: implement ``complete``; ``stream`` splits its reply."""

    name: str = "model"
    streaming: bool = False

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        response = await self.complete(request)
        for delta in split_response(response):
            yield delta

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}{' streaming' if self.streaming else ''}>"
