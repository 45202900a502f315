"""Server-sent events: the lines of a streamed Chat Completion, turned into :class:`Delta`s.

Each ``data:`` payload is one JSON chunk; ``data: [DONE]`` ends the stream. A chunk becomes
one or more deltas (text, reasoning, a piece of each tool call it carries), and the first
delta of every chunk keeps the payload verbatim in ``raw`` so a learner sees fragments
arrive as the server sent them (000 §3.2). Tool calls are matched by ``index``: ids and
names usually come only in the first fragment (some servers repeat them; the assembler
sets names, appends arguments). A stream that stops before a ``finish_reason`` or
``[DONE]`` raises :class:`~agentnb.errors.ModelStreamError`: a partial reply is not a reply,
and so does a chunk of the wrong shape (``choices`` not a list, a ``function`` not an object).
The bytes are framed by the one SSE framer (:class:`~agentnb.models.sse.SSEFramer`), and the
API key (and any credential in the URL) is masked in the text the events carry before
anything keeps them, also when it comes split over events
(:class:`~agentnb.models.masking.StreamMask`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

from ..._secrets import Secrets
from ...errors import ModelResponseError, ModelStreamError
from ..base import Delta, Usage
from ..masking import StreamMask
from ..sse import SSEEvent, SSEFramer
from .retry import redact
from .wire import load_json

__all__ = ["SSEReader", "chunk_deltas"]


def chunk_deltas(chunk: dict[str, Any], raw: str | None = None) -> list[Delta]:
    """The deltas of one parsed chunk; always at least one (so ``raw`` is never lost)."""
    deltas: list[Delta] = []
    usage = Usage.from_openai(chunk.get("usage")) if isinstance(chunk.get("usage"), dict) else None
    choices = chunk.get("choices") or []
    if not isinstance(choices, list):
        raise ModelStreamError(f"the chunk's choices is not a list: {choices!r:.80}")
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    delta = choice.get("delta") or {}
    if not isinstance(delta, dict):
        delta = {}
    text = delta.get("content")
    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    if text or reasoning:
        deltas.append(
            Delta(
                text=text if isinstance(text, str) else "",
                reasoning=reasoning if isinstance(reasoning, str) else "",
            )
        )
    calls = delta.get("tool_calls") or []
    for position, call in enumerate(calls if isinstance(calls, list) else ()):
        if not isinstance(call, dict):
            continue
        function = call.get("function") or {}
        if not isinstance(function, dict):
            raise ModelStreamError(f"the chunk's tool_calls[{position}].function is not an object")
        tool_id, name = call.get("id"), function.get("name")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send an object, not a string
            arguments = json.dumps(arguments, ensure_ascii=False)
        index = call.get("index")
        deltas.append(
            Delta(
                tool_index=index if isinstance(index, int) else position,
                tool_id=tool_id if isinstance(tool_id, str) and tool_id else None,
                tool_name=name if isinstance(name, str) and name else None,
                arguments=arguments if isinstance(arguments, str) else "",
            )
        )
    if finish or usage:
        if deltas:
            last = deltas[-1]
            deltas[-1] = Delta(
                last.text,
                last.reasoning,
                last.tool_index,
                last.tool_id,
                last.tool_name,
                last.arguments,
                finish_reason=finish or None,
                usage=usage,
            )
        else:
            deltas.append(Delta(finish_reason=finish or None, usage=usage))
    if not deltas:
        deltas.append(Delta())
    first = deltas[0]
    deltas[0] = Delta(
        first.text,
        first.reasoning,
        first.tool_index,
        first.tool_id,
        first.tool_name,
        first.arguments,
        first.finish_reason,
        first.usage,
        raw=raw,
    )
    return deltas


class SSEReader:
    """Reads SSE lines and yields deltas; remembers whether the stream ended properly."""

    def __init__(self, what: str, secrets: Secrets | None = None) -> None:
        self.what = what
        self.secrets = secrets or Secrets()  # masked in payloads and messages
        self.chunks = 0
        self.finished = False  # a finish_reason was seen
        self.done = False  # [DONE] was seen
        self._calls: dict[int, tuple[str | None, str | None]] = {}

    def _first_mention(self, delta: Delta) -> Delta:
        """Drop an id or name a server repeats in every chunk (llama-cpp-python does), so
        each call is announced once; the assembler would cope, the event stream reads better."""
        if delta.tool_index is None:
            return delta
        seen = self._calls.setdefault(delta.tool_index, (None, None))
        tool_id = delta.tool_id if delta.tool_id != seen[0] else None
        name = delta.tool_name if delta.tool_name != seen[1] else None
        self._calls[delta.tool_index] = (delta.tool_id or seen[0], delta.tool_name or seen[1])
        if (tool_id, name) == (delta.tool_id, delta.tool_name):
            return delta
        return replace(delta, tool_id=tool_id, tool_name=name)

    def _parse(self, payload: str) -> list[Delta]:
        payload = redact(payload, self.secrets)
        try:
            chunk = load_json(payload, f"chunk {self.chunks + 1}")
        except ModelResponseError as exc:
            raise ModelStreamError(f"{self.what}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ModelStreamError(
                f"{self.what}: chunk {self.chunks + 1} is not JSON ({exc.msg} at char "
                f"{exc.pos}): {payload[:200]!r}"
            ) from None
        if not isinstance(chunk, dict):
            raise ModelStreamError(f"{self.what}: chunk {self.chunks + 1} is not a JSON object")
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            message = redact(str(message), self.secrets)
            raise ModelStreamError(f"{self.what}: the server sent an error mid-stream: {message}")
        self.chunks += 1
        try:
            deltas = [self._first_mention(d) for d in chunk_deltas(chunk, payload)]
        except ModelResponseError as exc:
            raise ModelStreamError(f"{self.what}: chunk {self.chunks}: {exc}") from None
        if any(d.finish_reason for d in deltas):
            self.finished = True
        return deltas

    async def deltas(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[Delta]:
        """The deltas of a stream's bytes (in any pieces), its credentials masked across
        events; ends at ``[DONE]``."""
        framer, mask = SSEFramer(), StreamMask(self.secrets)
        async for chunk in chunks:
            for event in framer.feed(chunk):
                for delta in self._released(mask.feed(event)):
                    if delta is None:
                        return
                    yield delta
        for event in framer.close():
            for delta in self._released(mask.feed(event)):
                if delta is None:
                    return
                yield delta
        for delta in self._released(mask.close()):
            if delta is None:
                return
            yield delta

    def _released(self, events: list[SSEEvent]) -> Iterator[Delta | None]:
        """The deltas of events the mask released; None at ``[DONE]`` (the stream's end)."""
        for event in events:
            if event.data.strip() == "[DONE]":
                self.done = True
                yield None
                return
            yield from self._parse(event.data)

    def check_complete(self) -> None:
        """Raise if the stream ended without a finish_reason and without ``[DONE]``."""
        if self.done or self.finished:
            return
        if self.chunks == 0:
            raise ModelStreamError(
                f"{self.what}: the stream ended before any chunk (an empty body). Some servers "
                "cannot stream with tools (llama-cpp-python among them): try stream=False or "
                "profile='llama-cpp-python'"
            )
        raise ModelStreamError(
            f"{self.what}: the stream broke off after {self.chunks} chunks, without a "
            "finish_reason or [DONE]; the partial reply was discarded"
        )
