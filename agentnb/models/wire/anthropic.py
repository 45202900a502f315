"""Anthropic Messages (``POST /v1/messages``): content blocks in, content blocks out.

A request carries ``system`` (text or text blocks) and ``messages`` whose content is text or
blocks: ``text``, ``image``, ``tool_use`` (an assistant's call, its ``input`` an object),
``tool_result`` (in a user message, answering a ``tool_use_id``), ``thinking``. A reply is a
message of blocks with a ``stop_reason``; a stream is ``message_start``,
``content_block_start/delta/stop``, ``message_delta`` (the stop reason, the output tokens)
and ``message_stop``.

Into the sessions' Chat Completions shape: ``system`` is a leading system message; an
assistant's ``tool_use`` blocks are its ``tool_calls`` (the input as JSON text), ``thinking`` its
``reasoning_content`` (the thinking and ``redacted_thinking`` blocks kept whole, signatures
included, in its ``provider_data``: the API rejects a tool-use turn whose thinking was
altered, so they go back exactly as they came); a user message's
``tool_result`` blocks are ``tool`` messages before it (``is_error`` kept), its other blocks
its content parts. Blocks with no equivalent (images, documents, server tools) are kept
as they are, as content parts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...tokens import content_text
from ..base import Delta, ModelResponse, Usage
from ..response import NOT_SENT
from .base import KEPT, Reply, Request, fold_thinking, kept, new_id, sse

__all__ = [
    "ANTHROPIC",
    "AnthropicMessages",
    "from_messages",
    "params_of",
    "to_messages",
    "tools_of",
]

_NOT_PARAMS = frozenset(("model", "messages", "system", "tools", "stream"))
#: Anthropic's stop reasons as Chat Completions finish reasons (others are kept as they are).
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
#: Claude Code sends its session in ``metadata.user_id``: ``user_…_session_<uuid>``, or (its
#: current versions) a JSON object with a ``session_id``.
_SESSION = re.compile(r"session_([0-9A-Za-z-]{8,})")
_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _block(block: Any) -> Any:
    return dict(block) if isinstance(block, Mapping) else block


def _result_content(content: Any) -> Any:
    if isinstance(content, list) and all(
        isinstance(b, Mapping) and b.get("type") == "text" for b in content
    ):
        return content_text(content)
    return content if isinstance(content, str) else [_block(b) for b in content or ()]


def _assistant(blocks: Any) -> dict[str, Any]:
    if isinstance(blocks, str):
        return {"role": "assistant", "content": blocks}
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    thinking: list[dict[str, Any]] = []
    other: list[Any] = []
    for block in blocks if isinstance(blocks, list) else ():
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            text.append(str(block.get("text", "")))
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(
                {
                    "id": str(block.get("id") or ""),
                    "type": "function",
                    "function": {"name": str(block.get("name") or ""), "arguments": arguments},
                }
            )
        elif kind in ("thinking", "redacted_thinking"):
            if kind == "thinking":
                reasoning.append(str(block.get("thinking", "")))
            thinking.append(dict(block))
        else:
            other.append(_block(block))
    joined = "".join(text)
    message: dict[str, Any] = {"role": "assistant"}
    if other:
        message["content"] = [{"type": "text", "text": t} for t in text] + other
    else:
        message["content"] = joined if joined or not calls else None
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if thinking:
        message[KEPT] = {"api": "anthropic", "reasoning": thinking}
    return message


def to_messages(messages: Any, system: Any = None) -> list[dict[str, Any]]:
    """``system`` and ``messages`` as Chat Completions messages (see the module docstring)."""
    if not isinstance(messages, list):
        raise ValueError("an Anthropic Messages request needs a list of messages")
    out: list[dict[str, Any]] = []
    if isinstance(system, str) and system:
        out.append({"role": "system", "content": system})
    elif isinstance(system, list) and system:
        out.append({"role": "system", "content": [_block(b) for b in system]})
    for message in messages:
        if not isinstance(message, Mapping):
            raise ValueError(f"a message is not an object: {message!r:.80}")
        role, content = message.get("role"), message.get("content")
        if role == "assistant":
            out.append(_assistant(content))
            continue
        if isinstance(content, str) or content is None:
            out.append({"role": str(role or "user"), "content": content or ""})
            continue
        rest: list[Any] = []
        for block in content if isinstance(content, list) else ():
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                tool: dict[str, Any] = {
                    "role": "tool",
                    "tool_call_id": str(block.get("tool_use_id") or ""),
                    "content": _result_content(block.get("content")),
                }
                if block.get("is_error"):
                    tool["is_error"] = True
                out.append(tool)
            else:
                rest.append(_block(block))
        if rest:
            out.append({"role": str(role or "user"), "content": rest})
    return fold_thinking(out)


# -- writing a request (the model client's side) --------------------------------------------
_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.S)
#: ``cache_control`` of a prompt-caching breakpoint (``AnthropicModel(cache=True)``).
EPHEMERAL = {"type": "ephemeral"}


def _block_of(part: Any) -> Any:
    """A Chat Completions content part as an Anthropic block (text and images; others as is)."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if not isinstance(part, Mapping):
        return part
    image = part.get("image_url")
    if part.get("type") == "image_url" and isinstance(image, Mapping):
        url = str(image.get("url") or "")
        data = _DATA_URL.match(url)
        if data:
            source = {"type": "base64", "media_type": data.group(1), "data": data.group(2)}
            return {"type": "image", "source": source}
        return {"type": "image", "source": {"type": "url", "url": url}}
    return dict(part)


def _blocks_of(content: Any) -> list[Any]:
    if isinstance(content, list):
        return [_block_of(p) for p in content]
    return [{"type": "text", "text": content}] if content else []


def _assistant_blocks(message: Mapping[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """An assistant message as blocks, and whether reasoning this API did not write was
    dropped (only its own thinking blocks go back, signatures untouched)."""
    blocks = kept(message, "anthropic") or []
    dropped = not blocks and bool(message.get("reasoning_content") or message.get(KEPT))
    blocks += [b for b in _blocks_of(message.get("content")) if b.get("text") != ""]
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = None
        blocks.append(
            {
                "type": "tool_use",
                "id": str(call.get("id") or ""),
                "name": str(function.get("name") or ""),
                "input": arguments if isinstance(arguments, dict) else {},
            }
        )
    return blocks, dropped


def from_messages(
    messages: list[dict[str, Any]], cache: bool = False
) -> tuple[Any, list[dict[str, Any]], list[str]]:
    """Chat Completions messages as ``system`` and Anthropic ``messages`` (the inverse of
    :func:`to_messages`: tool results are ``tool_result`` blocks of the user turn after the
    call, and turns of one role are merged), and what could not be sent, in words. With
    ``cache``, the system prompt ends with a prompt-caching breakpoint."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    dropped = 0

    def add(role: str, blocks: list[Any]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"] += blocks
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role in ("system", "developer"):
            system.append(content_text(content) if not isinstance(content, str) else content)
        elif role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id") or ""),
                "content": content if isinstance(content, str) else _blocks_of(content),
            }
            if message.get("is_error"):
                result["is_error"] = True
            add("user", [result])
        elif role == "assistant":
            blocks, lost = _assistant_blocks(message)
            dropped += lost
            add("assistant", blocks)
        else:
            add("user", _blocks_of(content))
    notes = []
    if dropped:
        notes.append(
            f"the reasoning of {dropped} {NOT_SENT}: it was not written "
            "by Anthropic, which takes back only its own signed thinking blocks"
        )
    text = "\n\n".join(t for t in system if t)
    if cache and text:
        return [{"type": "text", "text": text, "cache_control": EPHEMERAL}], out, notes
    return text or None, out, notes


def tools_of(tools: list[dict[str, Any]], cache: bool = False) -> list[dict[str, Any]]:
    """Chat Completions tool schemas as Anthropic tools (``input_schema``); with ``cache``,
    the last ends with a prompt-caching breakpoint (the tools are cached with it)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function = tool.get("function") if tool.get("type") == "function" else None
        if isinstance(function, Mapping):
            schema = function.get("parameters") or {"type": "object", "properties": {}}
            entry = {"name": function.get("name"), "input_schema": schema}
            if function.get("description"):
                entry["description"] = function["description"]
            out.append(entry)
        else:
            out.append(dict(tool))
    if cache and out:
        out[-1] = {**out[-1], "cache_control": EPHEMERAL}
    return out


_CHOICES = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}
#: The output tokens asked for when the request does not say (Anthropic requires a number).
MAX_TOKENS = 4096


def params_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """Request parameters in Anthropic's names (``max_tokens`` always set)."""
    out: dict[str, Any] = {"max_tokens": MAX_TOKENS}
    for name, value in params.items():
        if name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
            out["max_tokens"] = value
        elif name == "stop":
            out["stop_sequences"] = [value] if isinstance(value, str) else value
        elif name == "tool_choice" and isinstance(value, str) and value in _CHOICES:
            out[name] = _CHOICES[value]
        elif name == "tool_choice" and isinstance(value, Mapping) and "function" in value:
            out[name] = {"type": "tool", "name": (value.get("function") or {}).get("name")}
        else:
            out[name] = value
    return out


def _tools(tools: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, Mapping) and "input_schema" in tool:
            function = {"name": tool.get("name"), "parameters": tool.get("input_schema")}
            if tool.get("description"):
                function["description"] = tool["description"]
            out.append({"type": "function", "function": function})
        elif isinstance(tool, Mapping):
            out.append(dict(tool))
    return out


def _usage(data: Any) -> Usage | None:
    """Input tokens include cached ones (as the GenAI conventions count them)."""
    if not isinstance(data, Mapping):
        return None
    prompt = sum(
        int(data.get(k) or 0)
        for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    completion = int(data.get("output_tokens") or 0)
    return Usage(
        prompt,
        completion,
        prompt + completion,
        cached_tokens=int(data.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(data.get("cache_creation_input_tokens") or 0),
    )


def _usage_dict(usage: Usage) -> dict[str, int]:
    """A usage as Anthropic reports it (``input_tokens`` without the cached ones)."""
    cached, written = usage.cached_tokens, usage.cache_write_tokens
    return {
        "input_tokens": usage.prompt_tokens - cached - written,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
        "output_tokens": usage.completion_tokens,
    }


def _finish(reason: Any) -> str | None:
    return _FINISH.get(reason, reason) if isinstance(reason, str) else None


class _AnthropicStream:
    """``message_start`` ... ``message_stop`` into deltas and the reply."""

    def __init__(self) -> None:
        self.done = False
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None

    def feed(self, event: str | None, data: str) -> list[Delta]:
        payload = json.loads(data)
        if not isinstance(payload, dict):
            raise ValueError(f"an event is not a JSON object: {data[:120]!r}")
        kind = payload.get("type") or event
        index = payload.get("index")
        if kind == "message_start":
            self._message = dict(payload.get("message") or {})
            self._usage.update(self._message.get("usage") or {})
        elif kind == "content_block_start" and isinstance(index, int):
            block = dict(payload.get("content_block") or {})
            self._blocks[index] = block
            if block.get("type") == "tool_use":
                self._json[index] = []
                return [
                    Delta(
                        tool_index=index,
                        tool_id=block.get("id"),
                        tool_name=block.get("name"),
                        raw=data,
                    )
                ]
        elif kind == "content_block_delta" and isinstance(index, int):
            return self._delta(index, payload.get("delta") or {}, data)
        elif kind == "message_delta":
            delta = payload.get("delta") or {}
            self._stop = delta.get("stop_reason") or self._stop
            self._usage.update(payload.get("usage") or {})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = payload.get("error") or {}
            raise ValueError(str(error.get("message") if isinstance(error, Mapping) else error))
        return [Delta(raw=data)]

    def _delta(self, index: int, delta: Mapping[str, Any], data: str) -> list[Delta]:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + str(delta.get("text", ""))
            return [Delta(text=str(delta.get("text", "")), raw=data)]
        if kind == "input_json_delta":
            piece = str(delta.get("partial_json", ""))
            self._json.setdefault(index, []).append(piece)
            return [Delta(tool_index=index, arguments=piece, raw=data)]
        if kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
            return [Delta(reasoning=str(delta.get("thinking", "")), raw=data)]
        if kind == "signature_delta":
            block["signature"] = block.get("signature", "") + str(delta.get("signature", ""))
        return [Delta(raw=data)]

    def reply(self) -> Reply:
        if not self.done:
            raise ValueError("the stream broke off before message_stop")
        blocks = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if index in self._json:
                text = "".join(self._json[index])
                block = {**block, "input": json.loads(text) if text.strip() else {}}
            blocks.append(block)
        message = _assistant(blocks)
        return Reply(
            message,
            _usage(self._usage),
            _finish(self._stop),
            self._message.get("id"),
            self._message.get("model"),
        )


def _session_ids(body: Mapping[str, Any]) -> list[str]:
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, Mapping) else None
    if isinstance(user, str) and user.lstrip().startswith("{"):  # current Claude Code: JSON
        try:
            data = json.loads(user)
        except ValueError:
            data = None
        session = data.get("session_id") if isinstance(data, dict) else None
        if isinstance(session, str) and session:
            return [session]
    found = _SESSION.search(user) if isinstance(user, str) else None
    return [found.group(1)] if found else []


class AnthropicMessages:
    """The Anthropic Messages wire format (see the module docstring)."""

    name = "anthropic"
    path = "/messages"
    provider = "anthropic"

    def read_request(self, body: dict[str, Any]) -> Request:
        return Request(
            "anthropic",
            str(body.get("model") or ""),
            to_messages(body.get("messages"), body.get("system")),
            _tools(body.get("tools")),
            {k: v for k, v in body.items() if k not in _NOT_PARAMS},
            bool(body.get("stream")),
            ids=_session_ids(body),
        )

    def write_request(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        params: Mapping[str, Any],
        stream: bool,
        cache: bool = False,
    ) -> tuple[dict[str, Any], list[str]]:
        """A request body (the model client's side: the inverse of :meth:`read_request`) and
        what could not be sent, in words; ``cache`` sets prompt-caching breakpoints on the
        system prompt and the tools."""
        system, converted, notes = from_messages(messages, cache)
        body: dict[str, Any] = {"model": model}
        if system is not None:
            body["system"] = system
        body["messages"] = converted
        if tools:
            body["tools"] = tools_of(tools, cache)
        body.update(params_of(params))
        if not tools:
            body.pop("tool_choice", None)
        if stream:
            body["stream"] = True
        return body, notes

    def read_reply(self, data: dict[str, Any]) -> Reply:
        if data.get("type") == "error":
            error = data.get("error") or {}
            raise ValueError(str(error.get("message") if isinstance(error, Mapping) else error))
        if not isinstance(data.get("content"), list):
            raise ValueError("the reply has no content list")
        return Reply(
            _assistant(data["content"]),
            _usage(data.get("usage")),
            _finish(data.get("stop_reason")),
            data.get("id") if isinstance(data.get("id"), str) else None,
            data.get("model") if isinstance(data.get("model"), str) else None,
        )

    def stream(self) -> _AnthropicStream:
        return _AnthropicStream()

    # -- the stand-in's side -------------------------------------------------------------
    def _blocks(self, response: ModelResponse) -> list[dict[str, Any]]:
        message = response.message.wire()
        blocks: list[dict[str, Any]] = kept(message, "anthropic") or []
        if message.get("reasoning_content") and not blocks:
            blocks.append(
                {"type": "thinking", "thinking": message["reasoning_content"], "signature": ""}
            )
        text = response.message.text
        if text or not message.get("tool_calls"):
            blocks.append({"type": "text", "text": text})
        for call in message.get("tool_calls") or ():
            function = call["function"]
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {"arguments": function.get("arguments")}
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": function["name"],
                    "input": arguments if isinstance(arguments, dict) else {"value": arguments},
                }
            )
        return blocks

    def _message(self, response: ModelResponse, request: Request) -> dict[str, Any]:
        message = response.message.wire()
        finish = response.finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
        return {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": request.model or "agentnb",
            "content": self._blocks(response),
            "stop_reason": _STOP.get(finish, "end_turn"),
            "stop_sequence": None,
        }

    def render(self, response: ModelResponse, request: Request, usage: Usage) -> dict[str, Any]:
        return {**self._message(response, request), "usage": _usage_dict(usage)}

    def render_stream(
        self, response: ModelResponse, request: Request, usage: Usage
    ) -> Iterator[bytes]:
        """The events Anthropic streams, in its order (see the module docstring)."""
        whole = self._message(response, request)
        start = {
            **whole,
            "content": [],
            "stop_reason": None,
            "usage": {**_usage_dict(usage), "output_tokens": 1},
        }
        yield sse({"type": "message_start", "message": start}, event="message_start")
        for index, block in enumerate(whole["content"]):
            kind = block["type"]
            empty = {
                "text": {"type": "text", "text": ""},
                "thinking": {"type": "thinking", "thinking": "", "signature": ""},
                "redacted_thinking": block,
            }.get(kind, {**block, "input": {}})
            yield sse(
                {"type": "content_block_start", "index": index, "content_block": empty},
                event="content_block_start",
            )
            if kind == "text":
                pieces = [
                    {"type": "text_delta", "text": block["text"][i : i + 8]}
                    for i in range(0, len(block["text"]), 8)
                ]
            elif kind == "thinking":
                pieces = [
                    {"type": "thinking_delta", "thinking": block["thinking"][i : i + 16]}
                    for i in range(0, len(block["thinking"]), 16)
                ]
                if block.get("signature"):
                    pieces.append({"type": "signature_delta", "signature": block["signature"]})
            elif kind == "redacted_thinking":
                pieces = []
            else:
                text = json.dumps(block["input"], ensure_ascii=False)
                pieces = [
                    {"type": "input_json_delta", "partial_json": text[i : i + 16]}
                    for i in range(0, len(text), 16)
                ]
            for piece in pieces:
                yield sse(
                    {"type": "content_block_delta", "index": index, "delta": piece},
                    event="content_block_delta",
                )
            yield sse({"type": "content_block_stop", "index": index}, event="content_block_stop")
        yield sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage.completion_tokens},
            },
            event="message_delta",
        )
        yield sse({"type": "message_stop"}, event="message_stop")

    def error(self, message: str, kind: str) -> dict[str, Any]:
        kinds = {"upstream_timeout": "timeout_error", "server_error": "api_error"}
        return {"type": "error", "error": {"type": kinds.get(kind, kind), "message": message}}

    def error_event(self, message: str, kind: str) -> bytes:
        return sse(self.error(message, kind), event="error")


ANTHROPIC = AnthropicMessages()
