"""Streaming: the fragments a streamed reply arrives in, and their assembly into a reply."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from ..messages import AssistantMessage, FunctionCall, ToolCall
from .response import ModelResponse, Usage

__all__ = ["Delta", "ReplyAssembler", "split_response", "stream_response"]


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
    #: Set on a reply's last fragment when a cache answered instead of the model.
    cached: bool = False
    #: Fields of the reply's message no fragment carries, on its last fragment: what the
    #: provider needs back verbatim (``provider_data``: signed thinking blocks, reasoning
    #: items with their ids and encrypted content).
    kept: dict[str, Any] | None = None


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
        self.cached = False
        self.kept: dict[str, Any] = {}

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
        if delta.cached:
            self.cached = True
        if delta.kept:
            self.kept.update(delta.kept)

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
        fields.update(self.kept)
        message = AssistantMessage(**fields)
        return ModelResponse(message, self.usage, self.finish_reason, model, cached=self.cached)


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
    data = msg.wire().get("provider_data")
    kept = {"provider_data": data} if data else None
    yield Delta(
        finish_reason=response.finish_reason,
        usage=response.usage,
        cached=response.cached,
        kept=kept,
    )


async def stream_response(response: ModelResponse, size: int = 12) -> AsyncIterator[Delta]:
    """``split_response`` as a stream that yields to the event loop between fragments, so a
    consumer (a live view, ``agent.stream``) sees each fragment while the run goes on."""
    for delta in split_response(response, size):
        yield delta
        await asyncio.sleep(0)
