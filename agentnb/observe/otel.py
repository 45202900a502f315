"""OpenTelemetry export in the GenAI semantic conventions: ``an.observe.instrument(...)``.

Every agentnb run, and every call seen by a recording proxy, becomes spans (the ``otel``
extra: ``opentelemetry-sdk``; the OTLP/HTTP exporter when an endpoint is given):

* ``invoke_agent {agent}`` - one per run (INTERNAL), the parent of its
* ``chat {model}`` - one per model call (CLIENT; a proxied call's is the child of the span
  the app sent in its ``traceparent`` header, else a root span), and
* ``execute_tool {tool}`` - one per tool call (INTERNAL).

Attributes follow open-telemetry/semantic-conventions-genai (status: Development):
``gen_ai.operation.name`` and ``gen_ai.provider.name`` (required: ``openai``, ``anthropic``,
or ``agentnb`` for a model run in this process), the request model and parameters,
``server.address``/``server.port`` (a proxied call's upstream), ``openai.api.type``,
``gen_ai.response.id``/``gen_ai.response.model``, finish reasons, usage (an estimate is
marked ``agentnb.usage.estimated``), time to first chunk, ``gen_ai.conversation.id`` (the
session id), ``gen_ai.tool.description``, ``error.type`` on failures. Message content only
with ``content=True``: ``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions`` and ``gen_ai.tool.definitions`` in the conventions' parts
format (JSON strings), and the tool call arguments and results. The conventions' version is
the resource's ``schema_url`` (:data:`SCHEMA_URL`) when agentnb makes the provider. Phoenix
(>= 15.10) and Langfuse read these spans over OTLP:
``instrument(endpoint="http://localhost:6006/v1/traces")``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..events import (
    Event,
    ModelDelta,
    ModelResponded,
    RequestAssembled,
    RunStarted,
    RunStopped,
    ToolFinished,
    ToolStarted,
)
from ..models import Usage
from ..session import add_observer
from .calls import UpstreamCalled, UpstreamFailed
from .genai import PARAMS, SCHEMA_URL, dump, ns, parts, span_table
from .recorder import PROXY_AGENT

__all__ = ["SCHEMA_URL", "Instrumentation", "instrument", "parts", "span_table"]


@dataclass
class _Run:
    span: Span | None
    model: str
    provider: str
    request: Any = None
    first_delta: float | None = None
    tools: dict[str, Span] = field(default_factory=dict)
    #: A proxied call: its wire format, its upstream, and the app's trace context.
    api: str | None = None
    server: tuple[str, int] | None = None
    parent: Context | None = None


#: The ``openai.api.type`` of each wire format speaking the OpenAI API.
_API_TYPES = {"chat": "chat_completions", "responses": "responses"}


class Instrumentation:
    """The observer that turns events into spans; ``uninstrument()`` stops it."""

    def __init__(self, provider: Any, content: bool, provider_name: str | None) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("agentnb", schema_url=SCHEMA_URL)
        self.content = content
        self.provider_name = provider_name
        self._runs: dict[str | None, _Run] = {}
        self._remove: Callable[[], None] = add_observer(self)

    def uninstrument(self) -> None:
        self._remove()

    def __call__(self, event: Event) -> None:
        match event:
            case RunStarted():
                self._run_started(event)
            case RunStopped():
                self._run_stopped(event)
            case RequestAssembled():
                run = self._runs.get(event.run_id)
                if run is not None:
                    run.request, run.first_delta = event.request, None
            case UpstreamCalled():
                self._upstream_called(event)
            case ModelDelta():
                run = self._runs.get(event.run_id)
                if run is not None and run.first_delta is None:
                    run.first_delta = event.wall
            case ModelResponded():
                self._model_responded(event)
            case UpstreamFailed():
                self._upstream_failed(event)
            case ToolStarted():
                run = self._runs.get(event.run_id)
                if run is not None:
                    run.tools[event.call_id] = self._tool_span(event, run)
            case ToolFinished():
                self._tool_finished(event)

    def _common(self, event: Event, run: _Run | None) -> dict[str, Any]:
        provider = self.provider_name or (run.provider if run is not None else "agentnb")
        return {"gen_ai.provider.name": provider, "gen_ai.conversation.id": event.session_id}

    # -- runs -----------------------------------------------------------------------------
    def _run_started(self, event: RunStarted) -> None:
        # A model run in this process is agentnb's own (the travel stand-in, a function):
        # a provider name of its own, not the API it might imitate.
        provider = event.provider or "agentnb"
        if event.agent == PROXY_AGENT:
            self._runs[event.run_id] = _Run(None, event.model, provider)
            return
        run = _Run(None, event.model, provider)
        attributes = {
            **self._common(event, run),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": event.agent,
            "gen_ai.request.model": event.model,
            "agentnb.run_id": event.run_id,
            "agentnb.trace_id": event.trace_id,
        }
        run.span = self.tracer.start_span(
            f"invoke_agent {event.agent}",
            kind=SpanKind.INTERNAL,
            start_time=ns(event.wall),
            attributes=attributes,
        )
        self._runs[event.run_id] = run

    def _run_stopped(self, event: RunStopped) -> None:
        run = self._runs.pop(event.run_id, None)
        if run is None or run.span is None:
            return
        span = run.span
        _usage(span, event.usage)
        span.set_attribute("agentnb.stop_reason", event.reason)
        if self.content and event.output:
            output = [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": event.output}],
                    "finish_reason": "stop",
                }
            ]
            span.set_attribute("gen_ai.output.messages", dump(output))
        if event.reason == "error":
            span.set_attribute("error.type", event.detail.split(":", 1)[0] or "error")
            span.set_status(Status(StatusCode.ERROR, event.detail))
        for open_span in run.tools.values():
            open_span.end(end_time=ns(event.wall))
        span.end(end_time=ns(event.wall))

    def _context(self, run: _Run | None) -> Context | None:
        if run is not None and run.span is not None:
            return trace.set_span_in_context(run.span)
        return run.parent if run is not None else None

    # -- model calls ----------------------------------------------------------------------
    def _upstream_called(self, event: UpstreamCalled) -> None:
        run = self._runs.get(event.run_id)
        if run is None:
            return
        run.api, run.provider = event.api, event.provider
        run.server = (event.server_address, event.server_port)
        if event.traceparent:  # the app's own span: the proxied call is its child
            run.parent = TraceContextTextMapPropagator().extract({"traceparent": event.traceparent})

    def _chat(self, event: Event, latency: float) -> tuple[Span, _Run | None]:
        run = self._runs.get(event.run_id)
        request = run.request if run else None
        params = dict(request.params) if request is not None else {}
        model = str(params.get("model") or (run.model if run else "") or "unknown")
        attributes: dict[str, Any] = {
            **self._common(event, run),
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
        }
        if run is not None and run.server is not None:
            attributes["server.address"], attributes["server.port"] = run.server
        api = _API_TYPES.get(run.api or "chat") if run is not None else None
        if api is not None and attributes["gen_ai.provider.name"] == "openai":
            attributes["openai.api.type"] = api
        for key, (name, kind) in PARAMS.items():
            value = params.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                attributes[name] = kind(value)
        stop = params.get("stop") or params.get("stop_sequences")
        if stop:
            attributes["gen_ai.request.stop_sequences"] = (
                [stop] if isinstance(stop, str) else [str(s) for s in stop]
            )
        start = event.wall - latency
        if run is not None and run.first_delta is not None:
            attributes["gen_ai.request.stream"] = True
            attributes["gen_ai.response.time_to_first_chunk"] = max(run.first_delta - start, 0.0)
        if self.content and request is not None:
            messages = request.messages
            system = [m for m in messages if m.get("role") in ("system", "developer")]
            if system:
                instructions = [p for m in system for p in parts(m)["parts"]]
                attributes["gen_ai.system_instructions"] = dump(instructions)
            attributes["gen_ai.input.messages"] = dump(
                [parts(m) for m in messages if m.get("role") not in ("system", "developer")]
            )
            if request.tools:
                attributes["gen_ai.tool.definitions"] = dump(request.tools)
        span = self.tracer.start_span(
            f"chat {model}",
            context=self._context(run),
            kind=SpanKind.CLIENT,
            start_time=ns(start),
            attributes=attributes,
        )
        return span, run

    def _model_responded(self, event: ModelResponded) -> None:
        span, _ = self._chat(event, event.latency)
        if event.finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [event.finish_reason])
        if event.response_id:
            span.set_attribute("gen_ai.response.id", event.response_id)
        if event.response_model:
            span.set_attribute("gen_ai.response.model", event.response_model)
        _usage(span, event.usage)
        if self.content:
            output = {**parts(event.message.wire()), "finish_reason": event.finish_reason or ""}
            span.set_attribute("gen_ai.output.messages", dump([output]))
        span.end(end_time=ns(event.wall))

    def _upstream_failed(self, event: UpstreamFailed) -> None:
        span, _ = self._chat(event, event.latency)
        kind = str(event.status) if event.status else "upstream_unreachable"
        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, event.error[:200]))
        span.end(end_time=ns(event.wall))

    # -- tools ----------------------------------------------------------------------------
    def _tool_span(self, event: ToolStarted | ToolFinished, run: _Run | None) -> Span:
        attributes: dict[str, Any] = {
            **self._common(event, run),
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.call_id,
            "gen_ai.tool.type": "function",
        }
        description = _description(run, event.name)
        if description:
            attributes["gen_ai.tool.description"] = description
        if self.content and isinstance(event, ToolStarted):
            attributes["gen_ai.tool.call.arguments"] = event.arguments
        span: Span = self.tracer.start_span(
            f"execute_tool {event.name}",
            context=self._context(run),
            kind=SpanKind.INTERNAL,
            start_time=ns(event.wall),
            attributes=attributes,
        )
        return span

    def _tool_finished(self, event: ToolFinished) -> None:
        run = self._runs.get(event.run_id)
        span = run.tools.pop(event.call_id, None) if run else None
        if span is None:  # answered without running (not_executed, cancelled)
            span = self._tool_span(event, run)
        if self.content:
            span.set_attribute("gen_ai.tool.call.result", event.content)
        if not event.ok:
            span.set_attribute("error.type", event.kind or "tool_error")
            span.set_status(Status(StatusCode.ERROR, event.content[:200]))
        span.end(end_time=ns(event.wall))


def _usage(span: Span, usage: Usage) -> None:
    """Tokens as counted; an estimate (the model sent none) is marked, never a silent 0."""
    span.set_attribute("gen_ai.usage.input_tokens", int(usage.prompt_tokens))
    span.set_attribute("gen_ai.usage.output_tokens", int(usage.completion_tokens))
    if usage.estimated:
        span.set_attribute("agentnb.usage.estimated", True)


def _description(run: _Run | None, name: str) -> str | None:
    """The tool's description, from the schema the model was given for it."""
    tools = run.request.tools if run is not None and run.request is not None else ()
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == name:
            description = function.get("description")
            return description if isinstance(description, str) and description else None
    return None


def instrument(
    tracer_provider: Any = None,
    content: bool = False,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    provider_name: str | None = None,
    service_name: str = "agentnb",
) -> Instrumentation:
    """Export every run (and every proxied call) as OpenTelemetry GenAI spans from now on.

    Args:
        tracer_provider: an SDK ``TracerProvider`` to use; else agentnb makes one whose
            resource carries ``service.name`` and the conventions' :data:`SCHEMA_URL`.
        content: record message content (opt-in in the conventions: it may be sensitive).
        endpoint: an OTLP/HTTP traces endpoint (Phoenix: ``http://localhost:6006/v1/traces``;
            Langfuse: ``…/api/public/otel/v1/traces`` with its auth ``headers``).
        provider_name: ``gen_ai.provider.name`` for every span; by default each call's own:
            ``openai`` for an HTTP model or a proxied Chat Completions / Responses call,
            ``anthropic`` for a proxied Anthropic Messages call, ``agentnb`` for a model run
            in this process (the travel stand-in, a ``FunctionModel``).
    Returns the :class:`Instrumentation`; ``.uninstrument()`` stops it.
    """
    provider = tracer_provider
    if provider is None:
        resource = Resource.create({"service.name": service_name}, schema_url=SCHEMA_URL)
        provider = TracerProvider(resource=resource)
    if endpoint is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=endpoint, headers=dict(headers or {}))
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return Instrumentation(provider, content, provider_name)
