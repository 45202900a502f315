"""The recorder: each proxied model call becomes a run in an agentnb session.

For every request, in whichever wire format (:mod:`.wire`), the recorder places it in a
conversation (:mod:`.conversations`) and records it through the runtime's own run state, as
a run the runtime did not drive (:class:`agentnb.runtime.ExternalRun`: its ids, events,
record and usage made as every run's): the call holds the session while it is in flight (it
is the session's ``active_run``), gets a :class:`~agentnb.session.RunRecord` in
``session.runs`` tagged with its ``conversation`` and a
:class:`~agentnb.session.RequestRecord` in ``session.requests`` (a Chat Completions request
exactly as the app sent it, so a cassette replays it; another format's as the conversation
the model answered), adds the messages the app added, and announces it all on the session's
bus as the runtime would: ``RunStarted``, ``MessageAppended`` per message,
``RequestAssembled``, :class:`~.calls.UpstreamCalled`, ``ModelDelta`` per streamed fragment,
``ModelResponded`` and the reply's ``MessageAppended``, then ``RunStopped``. So a session
view, ``an.log`` and ``an.observe.instrument`` follow a proxied app like an agentnb run. A
failed call ends with :class:`~.calls.UpstreamFailed` and ``RunStopped(reason="error")``. A
system prompt that changed between calls is recorded first, as an edit of the session.

Facts are kept as they are: usage the upstream did not send is estimated and marked
``estimated`` (never 0; the run's record counts the call ``unmetered``), and the request's
credentials are masked in everything kept.

A tool call in reply N is paired with its result in request N+1 by the session itself (the
transcript pairs ``tool_call_id``\\ s); a result that never came back shows in
``session.problems`` once the conversation went on without it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import AgentnbError
from ..events import Event, ModelDelta, ModelResponded, RequestAssembled, RunStarted
from ..messages import AssistantMessage, parse_message
from ..models import Delta, ModelRequest, Secrets, Usage
from ..runtime import ExternalRun
from ..session import RequestRecord, Session
from ..tokens import content_text
from .calls import ProxiedCall, UpstreamCalled, UpstreamFailed
from .conversations import Conversation, Conversations, explicit_id
from .wire import Reply, Request, Wire, named_tools

__all__ = ["PROXY_AGENT", "Recorder", "Upstream"]

#: The ``agent`` of the ``RunStarted`` events a proxied call emits.
PROXY_AGENT = "proxy"


@dataclass(frozen=True)
class Upstream:
    """Where the proxy forwards: what ``UpstreamCalled`` and the OTel spans name."""

    address: str
    port: int


def _last_user_text(messages: Sequence[dict[str, Any]]) -> str | None:
    for m in reversed(messages):
        if m.get("role") == "user":
            return content_text(m.get("content"))  # the one rule text is read by
    return None


def _share(c: Conversation, body: dict[str, Any], key: str, request: Request) -> list[Any]:
    """Let ``body`` reuse the objects of the conversation's previous request that did not
    change (its messages, its tools): a call then costs what it added, not its history.
    Returns the chat-shaped tool schemas (made once per distinct tools list)."""
    sent = body.get(key)
    if isinstance(sent, list):
        previous = c.sent
        for i in range(min(len(sent), len(previous))):
            if sent[i] is not previous[i] and sent[i] == previous[i]:
                sent[i] = previous[i]
        c.sent = sent
    tools = body.get("tools")
    if tools is None:
        return request.tools
    if tools is not c.tools and tools == c.tools:
        body["tools"] = c.tools
    elif tools is not c.tools:
        c.tools, c.schemas = tools, request.tools
    return c.schemas


class Recorder:
    """Builds and updates the sessions of the proxied calls (on the proxy's event loop)."""

    def __init__(self) -> None:
        self.conversations = Conversations()
        self.calls: list[ProxiedCall] = []
        #: Requests forwarded but not recorded (a body agentnb could not read), in words.
        self.skipped: list[str] = []
        #: Called (no arguments) after each call begins and ends: a view's refresh.
        self.listeners: list[Callable[[], Any]] = []

    @property
    def sessions(self) -> list[Session]:
        return [c.session for c in self.conversations.conversations]

    def _changed(self) -> None:
        for listener in list(self.listeners):
            try:
                listener()
            except Exception as exc:  # a view that fails never stops the proxy
                warnings.warn(f"proxy listener {listener!r} raised {exc!r}", stacklevel=2)

    def _emit(self, call: ProxiedCall, stage: str, cls: type[Event], **fields: Any) -> Event:
        """An event of the call's run at ``stage`` (its ``iteration`` is the call's number in
        its session: the proxied call is that conversation's n-th request)."""
        state = call.state
        assert state is not None
        state.stage = stage
        return state.emit(cls, **fields)

    # -- a call begins ------------------------------------------------------------------
    async def begin(
        self,
        wire: Wire,
        body: dict[str, Any],
        *,
        path: str,
        query: list[tuple[str, str]],
        headers: Mapping[str, str],
        secrets: Secrets,
        upstream: Upstream,
        traceparent: str | None = None,
    ) -> ProxiedCall:
        """A request arrives: place it, record it, announce it. Raises (ValueError,
        InvalidMessage) for a body that cannot be read; nothing is recorded then."""
        request = wire.read_request(body)
        explicit, scoped = explicit_id(headers, request.ids, request.cache_key)
        placement = self.conversations.place(
            request.messages,
            explicit,
            request.previous_response_id,
            scoped=scoped,
            upstream=request.conversation,
        )
        try:
            new = [
                parse_message(m, where="proxied message")
                for m in named_tools(request.messages, placement.start)  # a tool's name too
            ]
        except Exception:
            if placement.new:
                self.conversations.discard(placement.conversation)
            raise
        call = ProxiedCall("", "", wire.name, path, body, request.stream, time.monotonic(), query)
        call.secrets, call.model, call.store = secrets, request.model, request.store
        text = _last_user_text(request.messages)
        c = await self._take(call, placement.conversation, placement.edits, text)
        schemas = _share(c, body, "input" if wire.name == "responses" else "messages", request)
        session, state = c.session, call.state
        assert state is not None
        call.session_id, call.conversation = session.id, c
        state.iteration = len(session.requests) + 1
        record = state.begin()
        self._emit(
            call,
            "restore",
            RunStarted,
            input=record.input,
            agent=PROXY_AGENT,
            model=request.model,
            provider=wire.provider,
        )
        for message in new:
            state.add(message)
        self.conversations.grow(c, [m.wire() for m in new])
        call.estimate = session.tokens
        if wire.name == "chat":  # the request exactly as the app sent it (its dicts, shared)
            model_request = ModelRequest(request.messages, schemas, dict(request.params))
        else:  # the conversation the model answered, by reference to the session
            model_request = ModelRequest(
                tools=schemas,
                params=dict(request.params),
                source=session.transcript.wires,
                spans=((0, len(session)),),
            )
        budget = {"history": call.estimate, "total": call.estimate}
        note = f"assembled by the app ({wire.name} API), seen by the proxy"
        session.requests.append(
            RequestRecord(call.id, state.iteration, model_request, budget, policy="app", note=note)
        )
        self._emit(
            call,
            "assemble",
            RequestAssembled,
            request=model_request,
            budget=budget,
            policy="app",
            note=note,
        )
        self._emit(
            call,
            "call_model",
            UpstreamCalled,
            api=wire.name,
            provider=wire.provider,
            server_address=upstream.address,
            server_port=upstream.port,
            stream=request.stream,
            traceparent=traceparent,
        )
        self.calls.append(call)
        self._changed()
        return call

    async def _take(
        self,
        call: ProxiedCall,
        c: Conversation,
        edits: tuple[tuple[int, dict[str, Any]], ...],
        text: str | None,
    ) -> Conversation:
        """Record the system prompt's changes as edits, then hold the session for the call,
        whose run (an :class:`~agentnb.runtime.ExternalRun`) is then the session's. A session a
        run of yours holds (you continue a proxied session by hand) is not written into: the
        call goes into a branch of it, and the branch says why."""
        for attempt in range(2):
            try:
                for index, message in edits:
                    c.session.replace(index, message)
                    self.conversations.edited(c, index, message)
                tags = {"conversation": c.session.id}
                state = ExternalRun(c.session, text, tags=tags, started=call.started)
                await c.session.lock.acquire(state.id, c.session.id, "reject", call)
                call.id, call.state, c.busy = state.id, state, True
                return c
            except AgentnbError as exc:
                if attempt:
                    raise
                why = f"its session was held by run {c.session.lock.holder!r} ({exc})"
                c = self.conversations.branch(c, why)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- streamed fragments ---------------------------------------------------------------
    def deltas(self, call: ProxiedCall, deltas: Sequence[Delta]) -> None:
        """Fragments of the reply as they passed to the app: one ``ModelDelta`` each."""
        if call.first_chunk is None:
            call.first_chunk = time.monotonic() - call.started
        for delta in deltas:
            raw = delta.raw
            for kind, text in (("reasoning", delta.reasoning), ("text", delta.text)):
                if text:
                    self._emit(call, "call_model", ModelDelta, kind=kind, delta=text, raw=raw)
                    raw = None
            if delta.tool_index is not None and (delta.tool_name or delta.arguments):
                kind = "tool_args" if delta.arguments else "tool_call"
                self._emit(
                    call,
                    "call_model",
                    ModelDelta,
                    kind=kind,
                    delta=delta.arguments or delta.tool_name or "",
                    index=delta.tool_index,
                    call_id=delta.tool_id,
                    name=delta.tool_name,
                    raw=raw,
                )

    # -- a call ends --------------------------------------------------------------------
    def finish(self, call: ProxiedCall, status: int, reply: Reply) -> None:
        """The upstream answered ``reply`` with ``status``: record it and end the run."""
        call.status = status
        call.latency = time.monotonic() - call.started
        wire = call.secrets.mask_data(reply.message) if call.secrets else reply.message
        try:
            message = parse_message(wire, where="the upstream's reply")
            if not isinstance(message, AssistantMessage):
                raise ValueError(f"the reply is a {message.role!r} message, not an assistant's")
        except Exception as exc:
            self.fail(call, f"the upstream reply could not be read: {exc}", status)
            return
        call.reply = replace(reply, message=wire)
        state = call.state
        assert state is not None
        # usage not sent (a stream without include_usage): estimated, marked, unmetered
        estimate = Usage(call.estimate, message.tokens, call.estimate + message.tokens, True)
        usage = state.count(reply.usage, estimate, reply.model or call.model)
        self._emit(
            call,
            "call_model",
            ModelResponded,
            message=message,
            usage=usage,
            latency=call.latency,
            finish_reason=reply.finish_reason,
            response_id=reply.id,
            response_model=reply.model,
        )
        c = call.conversation
        assert c is not None
        state.stage = "decide"
        state.add(message)
        self.conversations.grow(c, [message.wire()])
        if call.store:
            self.conversations.answered(c, reply.id)
        c.unanswered = False
        names = [tool.function.name for tool in message.calls]
        reason, detail = (
            ("custom", "the app runs the tools: " + ", ".join(names))
            if names
            else ("final_answer", "the model answered with text")
        )
        self._stop(call, reason, detail, message.text or None)

    def fail(self, call: ProxiedCall, error: str, status: int | None = None) -> None:
        """The call failed: an error status, a broken stream, no answer, a bad reply."""
        if call.record is not None and call.record.stop_reason is not None:
            return  # already ended
        call.status = status if status is not None else call.status
        call.latency = time.monotonic() - call.started
        call.error = call.secrets.mask(error)
        assert call.conversation is not None
        call.conversation.unanswered = True
        self._emit(
            call,
            "call_model",
            UpstreamFailed,
            status=call.status,
            error=call.error,
            latency=call.latency,
        )
        assert call.state is not None
        call.state.count(None, Usage(call.estimate, 0, call.estimate, True), call.model)
        self._stop(call, "error", call.error, None)

    def _stop(self, call: ProxiedCall, reason: str, detail: str, output: str | None) -> None:
        c, state = call.conversation, call.state
        assert c is not None and state is not None
        state.stage = "call_model"  # where it stopped
        state.conclude(reason, detail, output)
        state.events = []  # the call is over: its events were heard, the record stays
        c.session.lock.release(call.id)
        c.busy = False
        call.secrets = Secrets()  # the call is over: its credentials are not kept
        self._changed()
