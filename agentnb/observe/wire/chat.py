"""Chat Completions (``POST /v1/chat/completions``): the shape sessions already hold.

Requests carry the whole history every time; a reply is ``choices[0].message``; a stream is
``data:`` chunks ending with ``data: [DONE]``. Reading a reply or a chunk is the OpenAI
client's own reading (:func:`~agentnb.models.openai.parse_completion`,
:func:`~agentnb.models.openai.chunk_deltas`), so the proxy and the client agree on every
deviation a server may have.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from ...models import (
    Delta,
    ModelResponse,
    ReplyAssembler,
    Usage,
    chunk_deltas,
    parse_completion,
)
from .base import Reply, Request, new_id, sse

__all__ = ["CHAT", "ChatCompletions", "cache_key", "explicit_ids"]

_NOT_PARAMS = frozenset(("model", "messages", "tools", "stream"))
#: ``metadata`` fields that name a conversation, in the order they are read.
_METADATA_IDS = ("session_id", "conversation_id", "thread_id")


def cache_key(body: Mapping[str, Any]) -> str | None:
    """``prompt_cache_key`` (OpenAI's, sent by Codex and the Agents SDK), if any."""
    key = body.get("prompt_cache_key")
    return key if isinstance(key, str) and key else None


def explicit_ids(body: Mapping[str, Any]) -> list[str]:
    """The body fields that name a conversation's session: ``metadata.session_id`` /
    ``conversation_id`` / ``thread_id``."""
    found: list[str] = []
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping):
        for name in _METADATA_IDS:
            value = metadata.get(name)
            if isinstance(value, str) and value:
                found.append(value)
    return found


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }


class _ChatStream:
    """Reads ``data:`` chunks into deltas; the reply is assembled as the client assembles it."""

    def __init__(self) -> None:
        self.done = False
        self._assembler = ReplyAssembler()
        self._id: str | None = None
        self._model: str | None = None

    def feed(self, event: str | None, data: str) -> list[Delta]:
        if data.strip() == "[DONE]":
            self.done = True
            return []
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            raise ValueError(f"a chunk is not a JSON object: {data[:120]!r}")
        if chunk.get("error"):
            error = chunk["error"]
            raise ValueError(str(error.get("message") if isinstance(error, dict) else error))
        self._id = self._id or _text(chunk.get("id"))
        self._model = self._model or _text(chunk.get("model"))
        deltas = chunk_deltas(chunk, data)
        for delta in deltas:
            self._assembler.add(delta)
        return deltas

    def reply(self) -> Reply:
        response = self._assembler.result()
        if not self.done and response.finish_reason is None:
            raise ValueError("the stream broke off: no finish_reason, no [DONE]")
        return Reply(
            response.message.wire(), response.usage, response.finish_reason, self._id, self._model
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class ChatCompletions:
    """The Chat Completions wire format (see the module docstring)."""

    name = "chat"
    path = "/chat/completions"
    provider = "openai"

    def read_request(self, body: dict[str, Any]) -> Request:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise ValueError("a Chat Completions request needs a list of message objects")
        tools = body.get("tools")
        return Request(
            "chat",
            str(body.get("model") or ""),
            messages,
            tools if isinstance(tools, list) else [],
            {k: v for k, v in body.items() if k not in _NOT_PARAMS},
            bool(body.get("stream")),
            ids=explicit_ids(body),
            cache_key=cache_key(body),
        )

    def read_reply(self, data: dict[str, Any]) -> Reply:
        response = parse_completion(data)
        return Reply(
            response.message.wire(),
            response.usage,
            response.finish_reason,
            _text(data.get("id")),
            _text(data.get("model")),
        )

    def stream(self) -> _ChatStream:
        return _ChatStream()

    # -- the stand-in's side -------------------------------------------------------------
    def _base(self, request: Request, kind: str) -> dict[str, Any]:
        return {
            "id": new_id("chatcmpl-"),
            "object": kind,
            "created": int(time.time()),
            "model": request.model or "agentnb",
        }

    def render(self, response: ModelResponse, request: Request, usage: Usage) -> dict[str, Any]:
        message = response.message.wire()
        finish = response.finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
        return {
            **self._base(request, "chat.completion"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage_dict(usage),
        }

    def render_stream(
        self, response: ModelResponse, request: Request, usage: Usage
    ) -> Iterator[bytes]:
        """Chunks as OpenAI sends them: the role, reasoning and text in pieces, each tool
        call's id and name then its arguments in pieces, the finish, and - when the request
        asked with ``stream_options.include_usage`` - a last chunk with the usage."""
        base = self._base(request, "chat.completion.chunk")
        message = response.message.wire()
        calls = message.get("tool_calls") or []
        finish = response.finish_reason or ("tool_calls" if calls else "stop")

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
            return sse({**base, "choices": [choice]})

        yield chunk({"role": "assistant", "content": ""})
        reasoning = message.get("reasoning_content") or ""
        for i in range(0, len(reasoning), 16):
            yield chunk({"reasoning_content": reasoning[i : i + 16]})
        text = response.message.text
        for i in range(0, len(text), 8):
            yield chunk({"content": text[i : i + 8]})
        for index, call in enumerate(calls):
            function = call["function"]
            head = {"name": function["name"], "arguments": ""}
            yield chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call["id"], "type": "function", "function": head}
                    ]
                }
            )
            arguments = function.get("arguments") or ""
            for i in range(0, len(arguments), 16):
                piece = {"index": index, "function": {"arguments": arguments[i : i + 16]}}
                yield chunk({"tool_calls": [piece]})
        yield chunk({}, finish)
        options = request.params.get("stream_options")
        if isinstance(options, Mapping) and options.get("include_usage"):
            yield sse({**base, "choices": [], "usage": usage_dict(usage)})
        yield b"data: [DONE]\n\n"

    def error(self, message: str, kind: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "code": kind}}

    def error_event(self, message: str, kind: str) -> bytes:
        return sse(self.error(message, kind))


CHAT = ChatCompletions()
