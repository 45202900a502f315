"""The OpenAI Responses API (``POST /v1/responses``): items in, items out.

A request carries ``instructions`` and ``input`` - a string or a list of items: messages,
``function_call`` and ``function_call_output`` items, ``reasoning`` items - and may name the
response it continues (``previous_response_id``: the upstream holds the history, the input
has only the new items) or an upstream ``conversation``. A reply's ``output`` is a list of
items; a stream is named semantic events (``response.output_text.delta``, ...) ending with
``response.completed``.

Into the sessions' Chat Completions shape: ``instructions`` is a leading system message;
consecutive assistant-side items (reasoning, assistant message, function calls) are one
assistant message (text, ``reasoning_content``, ``tool_calls`` with each ``call_id`` as its
id; the reasoning items kept whole, ``id`` and ``encrypted_content`` included, in its
``provider_data``, to be sent back exactly as they came); a ``function_call_output`` is a
``tool`` message. An item with no such equivalent (a built-in tool's call, an item
reference) is kept whole in the assistant message's ``items``.

Out of it (the model client's side, :meth:`Responses.write_request`): the inverse, with
tools in the Responses shape and parameters in its names.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from ...tokens import content_text
from ..base import Delta, ModelResponse, Usage
from ..response import NOT_SENT
from .base import KEPT, Reply, Request, kept, new_id, sse
from .chat import cache_key, explicit_ids

__all__ = ["RESPONSES", "Responses", "from_messages", "params_of", "to_messages", "tools_of"]

_NOT_PARAMS = frozenset(
    ("model", "input", "instructions", "tools", "stream", "previous_response_id", "conversation")
)
_TEXT_PARTS = frozenset(("input_text", "output_text", "text", "summary_text", "reasoning_text"))
_ASSISTANT_ITEMS = frozenset(("function_call", "reasoning"))


def _part(part: Any) -> Any:
    """A Responses content part as a Chat Completions one (text and images; others as is)."""
    if not isinstance(part, Mapping):
        return part
    kind = part.get("type")
    if kind in _TEXT_PARTS:
        return {"type": "text", "text": str(part.get("text", ""))}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image = {"url": part["image_url"]}
        if part.get("detail"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    return dict(part)


def _content(content: Any) -> Any:
    if isinstance(content, list):
        return [_part(p) for p in content]
    return content


class _Turn:
    """The assistant message being built from consecutive assistant-side items."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.refusal: list[str] = []
        self.items: list[dict[str, Any]] = []
        self.kept: list[dict[str, Any]] = []

    def add(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type") or "message"
        if kind == "message":
            parts = item.get("content")
            if isinstance(parts, str):
                self.text.append(parts)
                return
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, Mapping) and part.get("type") == "refusal":
                    self.refusal.append(str(part.get("refusal", "")))
                elif isinstance(part, Mapping) and part.get("type") in _TEXT_PARTS:
                    self.text.append(str(part.get("text", "")))
        elif kind == "function_call":
            arguments = item.get("arguments")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments or {}, ensure_ascii=False)
            function = {"name": str(item.get("name") or ""), "arguments": arguments}
            self.calls.append(
                {
                    "id": str(item.get("call_id") or item.get("id") or ""),
                    "type": "function",
                    "function": function,
                }
            )
        elif kind == "reasoning":
            text = content_text(item.get("summary")) or content_text(item.get("content"))
            if text:
                self.reasoning.append(text)
            self.kept.append(dict(item))
        else:
            self.items.append(dict(item))

    def message(self) -> dict[str, Any]:
        text = "".join(self.text)
        message: dict[str, Any] = {"role": "assistant"}
        message["content"] = text if text or not self.calls else None
        if self.calls:
            message["tool_calls"] = self.calls
        if self.reasoning:
            message["reasoning_content"] = "\n".join(self.reasoning)
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.items:
            message["items"] = self.items
        if self.kept:
            message[KEPT] = {"api": "responses", "reasoning": self.kept}
        return message


def to_messages(items: Any, instructions: Any = None) -> list[dict[str, Any]]:
    """``instructions`` and ``input`` items as Chat Completions messages (module docstring)."""
    out: list[dict[str, Any]] = []
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    elif isinstance(instructions, list) and instructions:
        out.append({"role": "system", "content": _content(instructions)})
    if isinstance(items, str):
        return [*out, {"role": "user", "content": items}]
    if not isinstance(items, list):
        raise ValueError("a Responses request needs input: a string or a list of items")
    turn: _Turn | None = None
    for item in items:
        if not isinstance(item, Mapping):
            raise ValueError(f"an input item is not an object: {item!r:.80}")
        kind = item.get("type") or ("message" if "role" in item else None)
        role = item.get("role")
        if kind == "message" and role != "assistant":
            if turn is not None:
                out.append(turn.message())
                turn = None
            out.append({"role": str(role or "user"), "content": _content(item.get("content"))})
        elif kind == "function_call_output":
            if turn is not None:
                out.append(turn.message())
                turn = None
            output = item.get("output")
            content = output if isinstance(output, str) else _content(output)
            out.append(
                {"role": "tool", "tool_call_id": str(item.get("call_id") or ""), "content": content}
            )
        else:
            turn = turn or _Turn()
            turn.add(item)
    if turn is not None:
        out.append(turn.message())
    return out


# -- writing a request (the model client's side) --------------------------------------------
def _input_part(part: Any) -> Any:
    """A Chat Completions content part as a Responses input part (the inverse of _part)."""
    if not isinstance(part, Mapping):
        return part
    if part.get("type") == "text":
        return {"type": "input_text", "text": str(part.get("text", ""))}
    image = part.get("image_url")
    if part.get("type") == "image_url" and isinstance(image, Mapping):
        out = {"type": "input_image", "image_url": image.get("url"), "detail": "auto"}
        if image.get("detail"):
            out["detail"] = image["detail"]
        return out
    return dict(part)


def _input(content: Any) -> Any:
    if isinstance(content, list):
        return [_input_part(p) for p in content]
    return "" if content is None else content


def from_messages(
    messages: list[dict[str, Any]],
) -> tuple[str | None, list[dict[str, Any]], list[str]]:
    """Chat Completions messages as ``instructions`` and ``input`` items (the inverse of
    :func:`to_messages`), and what could not be sent, in words: reasoning this API did not
    write (another API's signed thinking, a Chat server's ``reasoning_content``) is dropped
    and counted, never sent as if it were this API's."""
    instructions: str | None = None
    items: list[dict[str, Any]] = []
    dropped = 0
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role in ("system", "developer") and i == 0 and isinstance(content, str):
            instructions = content
        elif role == "tool":
            output = content if isinstance(content, str) else json.dumps(content)
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id") or ""),
                    "output": output,
                }
            )
        elif role == "assistant":
            reasoning = kept(message, "responses")
            if reasoning:
                items += reasoning
            elif message.get("reasoning_content") or message.get(KEPT):
                dropped += 1
            text = content_text(content)
            if text:
                items.append({"role": "assistant", "content": text})
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                items.append(
                    {
                        "type": "function_call",
                        "call_id": str(call.get("id") or ""),
                        "name": str(function.get("name") or ""),
                        "arguments": str(function.get("arguments") or ""),
                    }
                )
            items += [dict(item) for item in message.get("items") or () if isinstance(item, dict)]
        else:
            items.append({"role": str(role or "user"), "content": _input(content)})
    notes = []
    if dropped:
        notes.append(
            f"the reasoning of {dropped} {NOT_SENT}: it was not written "
            "by the Responses API, which takes back only its own reasoning items"
        )
    return instructions, items, notes


def tools_of(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tool schemas as Responses tools (a function's fields at the top, and
    ``strict`` said: the API's default is strict, which a plain schema does not meet)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function = tool.get("function") if tool.get("type") == "function" else None
        if isinstance(function, Mapping):
            out.append({"type": "function", "strict": False, **function})
        else:
            out.append(dict(tool))
    return out


#: Chat Completions parameter names the Responses API spells otherwise.
_RENAMED = {"max_tokens": "max_output_tokens", "max_completion_tokens": "max_output_tokens"}


def _text_format(value: Mapping[str, Any]) -> dict[str, Any]:
    """Chat Completions' ``response_format`` as the Responses API's ``text.format`` (the
    ``json_schema`` object's fields one level up)."""
    if value.get("type") == "json_schema" and isinstance(value.get("json_schema"), Mapping):
        return {"type": "json_schema", **value["json_schema"]}
    return dict(value)


def params_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """Request parameters in the Responses API's names."""
    out: dict[str, Any] = {}
    for name, value in params.items():
        if name in _RENAMED:
            out[_RENAMED[name]] = value
        elif name == "reasoning_effort":
            out["reasoning"] = {**out.get("reasoning", {}), "effort": value}
        elif name == "response_format" and isinstance(value, Mapping):
            out["text"] = {**out.get("text", {}), "format": _text_format(value)}
        elif name == "tool_choice" and isinstance(value, Mapping) and "function" in value:
            out[name] = {"type": "function", "name": (value.get("function") or {}).get("name")}
        else:
            out[name] = value
    return out


def _tools(tools: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, Mapping) and tool.get("type") == "function" and "name" in tool:
            function = {k: v for k, v in tool.items() if k != "type"}
            out.append({"type": "function", "function": function})
        elif isinstance(tool, Mapping):
            out.append(dict(tool))
    return out


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, Mapping):
        return None
    prompt, completion = int(data.get("input_tokens") or 0), int(data.get("output_tokens") or 0)
    inputs, outputs = data.get("input_tokens_details"), data.get("output_tokens_details")
    return Usage(
        prompt,
        completion,
        int(data.get("total_tokens") or prompt + completion),
        cached_tokens=int((inputs or {}).get("cached_tokens") or 0),
        reasoning_tokens=int((outputs or {}).get("reasoning_tokens") or 0),
    )


def _finish(response: Mapping[str, Any], message: Mapping[str, Any]) -> str:
    if message.get("tool_calls"):
        return "tool_calls"
    if response.get("status") == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        return "length" if reason == "max_output_tokens" else str(reason or "incomplete")
    return "stop"


def _reply(response: Mapping[str, Any]) -> Reply:
    if response.get("status") == "failed" or response.get("error"):
        error = response.get("error") or {}
        raise ValueError(str(error.get("message") if isinstance(error, Mapping) else error))
    output = response.get("output")
    if not isinstance(output, list):
        raise ValueError("the response has no output list")
    turn = _Turn()
    for item in output:
        if isinstance(item, Mapping):
            turn.add(item)
    message = turn.message()
    return Reply(
        message,
        _usage(response.get("usage")),
        _finish(response, message),
        response.get("id") if isinstance(response.get("id"), str) else None,
        response.get("model") if isinstance(response.get("model"), str) else None,
    )


class _ResponsesStream:
    """Semantic events into deltas; the reply is ``response.completed``'s whole response."""

    def __init__(self) -> None:
        self.done = False
        self._final: Mapping[str, Any] | None = None

    def feed(self, event: str | None, data: str) -> list[Delta]:
        payload = json.loads(data)
        if not isinstance(payload, dict):
            raise ValueError(f"an event is not a JSON object: {data[:120]!r}")
        kind = payload.get("type") or event
        if kind in ("response.completed", "response.incomplete"):
            self.done, self._final = True, payload.get("response") or {}
            return [Delta(raw=data)]
        if kind in ("error", "response.failed"):
            response = payload.get("response") or {}
            error = payload.get("error") or response.get("error") or payload
            raise ValueError(str(error.get("message") if isinstance(error, Mapping) else error))
        index = payload.get("output_index")
        if kind == "response.output_text.delta":
            return [Delta(text=str(payload.get("delta", "")), raw=data)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [Delta(reasoning=str(payload.get("delta", "")), raw=data)]
        if kind == "response.function_call_arguments.delta":
            return [Delta(tool_index=index, arguments=str(payload.get("delta", "")), raw=data)]
        item = payload.get("item")
        if (
            kind == "response.output_item.added"
            and isinstance(item, Mapping)
            and item.get("type") == "function_call"
        ):
            return [
                Delta(
                    tool_index=index,
                    tool_id=item.get("call_id"),
                    tool_name=item.get("name"),
                    raw=data,
                )
            ]
        return [Delta(raw=data)]

    def reply(self) -> Reply:
        if self._final is None:
            raise ValueError("the stream broke off before response.completed")
        return _reply(self._final)


class Responses:
    """The Responses API wire format (see the module docstring)."""

    name = "responses"
    path = "/responses"
    provider = "openai"

    def read_request(self, body: dict[str, Any]) -> Request:
        previous = body.get("previous_response_id")
        conversation = body.get("conversation")
        if isinstance(conversation, Mapping):
            conversation = conversation.get("id")
        return Request(
            "responses",
            str(body.get("model") or ""),
            to_messages(body.get("input"), body.get("instructions")),
            _tools(body.get("tools")),
            {k: v for k, v in body.items() if k not in _NOT_PARAMS},
            bool(body.get("stream")),
            previous if isinstance(previous, str) and previous else None,
            conversation if isinstance(conversation, str) and conversation else None,
            body.get("store") is not False,
            explicit_ids(body),
            cache_key(body),
        )

    def read_reply(self, data: dict[str, Any]) -> Reply:
        return _reply(data)

    def write_request(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        params: Mapping[str, Any],
        stream: bool,
    ) -> tuple[dict[str, Any], list[str]]:
        """A request body (the model client's side: the inverse of :meth:`read_request`) and
        what could not be sent, in words."""
        instructions, items, notes = from_messages(messages)
        body: dict[str, Any] = {"model": model}
        if instructions is not None:
            body["instructions"] = instructions
        body["input"] = items
        if tools:
            body["tools"] = tools_of(tools)
        body.update(params_of(params))
        if stream:
            body["stream"] = True
        return body, notes

    def stream(self) -> _ResponsesStream:
        return _ResponsesStream()

    # -- the stand-in's side -------------------------------------------------------------
    def _items(self, response: ModelResponse) -> list[dict[str, Any]]:
        message = response.message.wire()
        items: list[dict[str, Any]] = kept(message, "responses") or []
        if message.get("reasoning_content") and not items:
            summary = [{"type": "summary_text", "text": message["reasoning_content"]}]
            items.append({"type": "reasoning", "id": new_id("rs_"), "summary": summary})
        text = response.message.text
        if text or not message.get("tool_calls"):
            part = {"type": "output_text", "text": text, "annotations": []}
            items.append(
                {
                    "type": "message",
                    "id": new_id("msg_"),
                    "status": "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        for call in message.get("tool_calls") or ():
            function = call["function"]
            items.append(
                {
                    "type": "function_call",
                    "id": new_id("fc_"),
                    "call_id": call["id"],
                    "name": function["name"],
                    "arguments": function.get("arguments") or "",
                    "status": "completed",
                }
            )
        return items

    def _response(
        self, request: Request, output: list[dict[str, Any]], usage: Usage | None, status: str
    ) -> dict[str, Any]:
        tools = [
            {"type": "function", **t["function"]} if t.get("type") == "function" else t
            for t in request.tools
        ]
        return {
            "id": new_id("resp_"),
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": request.params.get("max_output_tokens"),
            "model": request.model or "agentnb",
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": request.previous_response_id,
            "reasoning": {"effort": None, "summary": None},
            "store": request.store,
            "temperature": request.params.get("temperature", 1.0),
            "text": request.params.get("text") or {"format": {"type": "text"}},
            "tool_choice": request.params.get("tool_choice", "auto"),
            "tools": tools,
            "top_p": request.params.get("top_p", 1.0),
            "truncation": "disabled",
            "usage": None if usage is None else self._usage(usage),
            "user": None,
            "metadata": request.params.get("metadata") or {},
        }

    def _usage(self, usage: Usage) -> dict[str, Any]:
        return {
            "input_tokens": usage.prompt_tokens,
            "input_tokens_details": {"cached_tokens": usage.cached_tokens},
            "output_tokens": usage.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.total_tokens,
        }

    def render(self, response: ModelResponse, request: Request, usage: Usage) -> dict[str, Any]:
        return self._response(request, self._items(response), usage, "completed")

    def render_stream(
        self, response: ModelResponse, request: Request, usage: Usage
    ) -> Iterator[bytes]:
        """The events the Responses API streams, in its order (see the module docstring)."""
        final = self._response(request, self._items(response), usage, "completed")
        started = {**final, "status": "in_progress", "output": [], "usage": None}
        numbers = iter(range(1_000_000))

        def event(kind: str, **fields: Any) -> bytes:
            return sse({"type": kind, "sequence_number": next(numbers), **fields}, event=kind)

        yield event("response.created", response=started)
        yield event("response.in_progress", response=started)
        for index, item in enumerate(final["output"]):
            at = {"item_id": item["id"], "output_index": index}
            kind = item["type"]
            if kind == "message":
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "content": []},
                )
                part = item["content"][0]
                yield event(
                    "response.content_part.added", **at, content_index=0, part={**part, "text": ""}
                )
                text = part["text"]
                for i in range(0, len(text), 8):
                    yield event(
                        "response.output_text.delta",
                        **at,
                        content_index=0,
                        delta=text[i : i + 8],
                        logprobs=[],
                    )
                yield event(
                    "response.output_text.done", **at, content_index=0, text=text, logprobs=[]
                )
                yield event("response.content_part.done", **at, content_index=0, part=part)
            elif kind == "function_call":
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
                arguments = item["arguments"]
                for i in range(0, len(arguments), 16):
                    yield event(
                        "response.function_call_arguments.delta", **at, delta=arguments[i : i + 16]
                    )
                yield event("response.function_call_arguments.done", **at, arguments=arguments)
            else:  # reasoning
                yield event(
                    "response.output_item.added", output_index=index, item={**item, "summary": []}
                )
                text = content_text(item.get("summary"))
                part = {"type": "summary_text", "text": ""}
                yield event(
                    "response.reasoning_summary_part.added", **at, summary_index=0, part=part
                )
                for i in range(0, len(text), 16):
                    yield event(
                        "response.reasoning_summary_text.delta",
                        **at,
                        summary_index=0,
                        delta=text[i : i + 16],
                    )
                yield event(
                    "response.reasoning_summary_text.done", **at, summary_index=0, text=text
                )
                yield event(
                    "response.reasoning_summary_part.done",
                    **at,
                    summary_index=0,
                    part={**part, "text": text},
                )
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=final)

    def error(self, message: str, kind: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}

    def error_event(self, message: str, kind: str) -> bytes:
        return sse(
            {
                "type": "error",
                "code": kind,
                "message": message,
                "param": None,
                "sequence_number": 0,
            },
            event="error",
        )


RESPONSES = Responses()
