"""The recorder: each proxied Chat Completions call becomes a model call in an agentnb session.

For every request the recorder places it in a conversation (:mod:`.threading`), appends the
messages the app added to that session, records the request (``session.requests``), and
announces it all on the session's bus as the runtime would: ``RunStarted``, one
``MessageAppended`` per message, ``RequestAssembled``, ``ModelDelta`` per streamed fragment,
``ModelResponded`` and the reply's ``MessageAppended``, then ``RunStopped``. So a session view,
``an.log`` and ``an.observe.instrument`` follow a proxied app like an agentnb run. A failed
call ends with :class:`UpstreamFailed` and ``RunStopped(reason="error")``.

A tool call in reply N is paired with its result in request N+1 by the session itself (the
transcript pairs ``tool_call_id``\\ s); a result that never came back shows in
``session.problems`` once the conversation went on without it.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from .._secrets import Secrets, is_secret_name
from ..events import (
    Event,
    MessageAppended,
    ModelDelta,
    ModelResponded,
    Origin,
    RequestAssembled,
    RunStarted,
    RunStopped,
)
from ..messages import AssistantMessage, Message, parse_message
from ..models.base import ModelRequest, ReplyAssembler, Usage
from ..models.openai.sse import chunk_deltas
from ..models.openai.wire import parse_completion
from ..session import Session
from ..session.records import RequestRecord
from .call import Call, UpstreamFailed
from .threading import Thread, Threads

__all__ = ["PROXY_AGENT", "Call", "Recorder", "UpstreamFailed"]

#: The ``agent`` of the ``RunStarted`` events a proxied call emits.
PROXY_AGENT = "proxy"
_NOT_PARAMS = frozenset(("model", "messages", "tools", "stream"))


def _last_user_text(messages: list[dict[str, Any]]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return None


class Recorder:
    """Builds and updates the sessions of the proxied calls (on the proxy's event loop)."""

    def __init__(self) -> None:
        self.threads = Threads()
        self.calls: list[Call] = []
        #: Called (no arguments) after each call begins and ends: a view's refresh.
        self.listeners: list[Callable[[], Any]] = []
        self._its: dict[str | None, int] = {}  # run id -> its model call number in the session

    def _emit(
        self, session: Session, origin: Origin, stage: str, cls: type[Event], **fields: Any
    ) -> None:
        """Number and publish an event as the runtime does; ``iteration`` is the model call's
        number in its session (the proxied call is that conversation's n-th request)."""
        it = self._its.get(origin.run_id, 1)
        session.bus.emit(cls, origin, stage, it, time.monotonic(), fields)

    def _changed(self) -> None:
        for listener in list(self.listeners):
            try:
                listener()
            except Exception as exc:  # a view that fails never stops the proxy
                warnings.warn(f"proxy listener {listener!r} raised {exc!r}", stacklevel=2)

    @property
    def sessions(self) -> list[Session]:
        return [t.session for t in self.threads.threads]

    # -- a call begins ------------------------------------------------------------------
    def begin(
        self, path: str, body: dict[str, Any], explicit: str | None,
        secrets: Secrets | None = None, query: str = "",
    ) -> Call:  # fmt: skip
        """A request arrives: place it, append what it adds, announce it. ``secrets`` (the
        credentials the request carried) are masked in everything kept from now on."""
        secrets = secrets or Secrets()
        if secrets:
            body = secrets.mask_data(body)
        sent = body["messages"]
        placement = self.threads.place(sent, explicit)
        start = placement.start
        try:
            messages = [parse_message(m, where="proxied message") for m in sent[start:]]
        except Exception:
            if placement.new:
                self.threads.discard(placement.thread)
            raise
        thread = placement.thread
        session = thread.session
        thread.busy = True
        model = str(body.get("model") or "")
        origin = Origin.now(session.id, "p-" + os.urandom(6).hex(), os.urandom(16).hex())
        call = Call(session.id, path, body, bool(body.get("stream")), time.monotonic())
        call.thread, call.origin, call._secrets = thread, origin, secrets
        pairs = parse_qsl(query, keep_blank_values=True)
        call.query = sorted((k, v) for k, v in pairs if not is_secret_name(k))
        self._its[origin.run_id] = len(session.requests) + 1
        self._emit(
            session, origin, "restore", RunStarted,
            input=_last_user_text(sent), agent=PROXY_AGENT, model=model,
        )  # fmt: skip
        for message, wire in zip(messages, sent[start:], strict=True):
            self._append(thread, origin, "restore", message, wire)
        params = {k: v for k, v in body.items() if k not in _NOT_PARAMS}
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        request = ModelRequest(session.wire(), tools, params)
        tokens = session.tokens
        budget = {"history": tokens, "total": tokens}
        note = "assembled by the app, seen by the proxy"
        iteration = self._its[origin.run_id]
        session.requests.append(
            RequestRecord(origin.run_id, iteration, request, budget, policy="app", note=note)
        )
        self._emit(
            session, origin, "assemble", RequestAssembled,
            request=request, budget=budget, policy="app", note=note,
        )  # fmt: skip
        if call.stream:
            call._assembler = ReplyAssembler()
        self.calls.append(call)
        self._changed()
        return call

    def _append(
        self, thread: Thread, origin: Origin, stage: str, message: Message, wire: dict[str, Any]
    ) -> None:
        from .threading import canonical

        session = thread.session
        index = session.transcript.add(message)
        thread.keys.append(canonical(wire))
        self._emit(session, origin, stage, MessageAppended, index=index, message=message)

    # -- streamed chunks ------------------------------------------------------------------
    def chunk(self, call: Call, data: bytes) -> None:
        """Bytes of an SSE body as they passed to the app: parse the complete events."""
        if call.first_chunk is None:
            call.first_chunk = time.monotonic() - call.started
        call._chunks += 1
        call._raw.append(data)
        buffer = call._pending + data
        *events, call._pending = buffer.replace(b"\r\n", b"\n").split(b"\n\n")
        for raw in events:
            for line in raw.split(b"\n"):
                if line.startswith(b"data:"):
                    self._payload(call, line[5:].strip().decode("utf-8", "replace"))

    def _payload(self, call: Call, payload: str) -> None:
        if payload == "[DONE]" or call._assembler is None:
            return
        payload = call._secrets.mask(payload)
        try:
            chunk = json.loads(payload)
            deltas = chunk_deltas(chunk, payload) if isinstance(chunk, dict) else []
        except Exception:  # a malformed chunk reaches the app as it is; the reply stays partial
            return
        assert call.thread is not None and call.origin is not None
        for delta in deltas:
            call._assembler.add(delta)
            kind = "text" if delta.text else "tool_args" if delta.tool_index is not None else ""
            if kind:
                self._emit(
                    call.thread.session, call.origin, "call_model", ModelDelta,
                    kind=kind, delta=delta.text or delta.arguments, index=delta.tool_index,
                    call_id=delta.tool_id, name=delta.tool_name, raw=delta.raw,
                )  # fmt: skip

    # -- a call ends --------------------------------------------------------------------
    def finish(self, call: Call, status: int, body: bytes | None = None) -> None:
        """The upstream answered ``status`` (with the whole ``body`` unless it streamed)."""
        mask = call._secrets.mask
        call.status = status
        call.latency = time.monotonic() - call.started
        if body is not None:
            call.response = mask(body.decode("utf-8", "replace"))
        else:
            if call._pending.strip():  # the last event had no blank line after it
                pending, call._pending = call._pending, b""
                for line in pending.split(b"\n"):
                    if line.startswith(b"data:"):
                        self._payload(call, line[5:].strip().decode("utf-8", "replace"))
            call.response = mask(b"".join(call._raw).decode("utf-8", "replace"))
            call._raw = []
        if status >= 400:
            self.fail(call, f"HTTP {status}: {call.response[:500]}", status)
            return
        model = str(call.body.get("model") or "")
        try:
            if call._assembler is not None:
                response = call._assembler.result(model)
                if (
                    response.finish_reason is None
                    and b"data: [DONE]" not in call.response[-64:].encode()
                ):
                    self.fail(call, "the stream broke off: no finish_reason, no [DONE]", status)
                    return
            else:
                response = parse_completion(json.loads(call.response), model)
        except Exception as exc:
            self.fail(call, f"the upstream reply could not be read: {exc}", status)
            return
        self._reply(call, response.message, response.usage, response.finish_reason)

    def _reply(
        self, call: Call, message: AssistantMessage, usage: Usage | None, finish: str | None
    ) -> None:
        thread, origin = call.thread, call.origin
        assert thread is not None and origin is not None
        usage = usage or Usage(0, 0, 0, estimated=True)
        self._emit(
            thread.session, origin, "call_model", ModelResponded,
            message=message, usage=usage, latency=call.latency, finish_reason=finish,
        )  # fmt: skip
        self._append(thread, origin, "decide", message, message.wire())
        thread.busy = thread.unanswered = False
        calls = [c.function.name for c in message.calls]
        reason, detail = (
            ("custom", "the app runs the tools: " + ", ".join(calls))
            if calls
            else ("final_answer", "the model answered with text")
        )
        self._stop(call, reason, detail, message.text, usage)

    def fail(self, call: Call, error: str, status: int | None = None) -> None:
        """The call failed: an error status, a broken stream, no answer, a bad reply."""
        thread, origin = call.thread, call.origin
        assert thread is not None and origin is not None
        call.status = status if status is not None else call.status
        call.latency = time.monotonic() - call.started
        call.error = call._secrets.mask(error)
        thread.busy, thread.unanswered = False, True
        self._emit(
            thread.session, origin, "call_model", UpstreamFailed,
            status=call.status, error=call.error, latency=call.latency,
        )  # fmt: skip
        self._stop(call, "error", call.error, None, Usage(0, 0, 0, estimated=True))

    def _stop(self, call: Call, reason: str, detail: str, output: str | None, usage: Usage) -> None:
        assert call.thread is not None and call.origin is not None
        self._emit(
            call.thread.session, call.origin, "persist", RunStopped,
            reason=reason, detail=detail, output=output, iterations=1, usage=usage,
            stopped_in="call_model",
        )  # fmt: skip
        self._its.pop(call.origin.run_id, None)
        call._secrets = Secrets()  # the call is over: its credentials are not kept
        self._changed()
