"""OpenTelemetry GenAI export with an in-memory exporter: names, types, the span tree, content."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import openai
import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import agentnb as an
from agentnb.observe.genai import SCHEMA_URL
from tests.observe.observe_helpers import KEY
from tests.servers.fault_server import Step, reply, text_chunks


def _registry() -> set[str]:
    """Every attribute name of the semantic conventions' registries agentnb writes from (the
    GenAI, server, error and OpenAI ones, as opentelemetry-semantic-conventions ships them)."""
    from opentelemetry.semconv._incubating.attributes import (
        error_attributes,
        gen_ai_attributes,
        openai_attributes,
        server_attributes,
    )

    modules = (error_attributes, gen_ai_attributes, openai_attributes, server_attributes)
    return {v for m in modules for k, v in vars(m).items() if k.isupper() and isinstance(v, str)}


#: The registry's names (open-telemetry/semantic-conventions-genai model/gen-ai/registry.yaml)
REGISTRY = _registry()
#: The registry's types of the attributes agentnb writes (string[] arrive as tuples).
TYPES = {
    "gen_ai.request.max_tokens": int,
    "gen_ai.request.choice.count": int,
    "gen_ai.request.temperature": float,
    "gen_ai.request.top_p": float,
    "gen_ai.request.top_k": float,
    "gen_ai.request.stop_sequences": tuple,
    "gen_ai.request.frequency_penalty": float,
    "gen_ai.request.presence_penalty": float,
    "gen_ai.request.seed": int,
    "gen_ai.request.stream": bool,
    "gen_ai.response.finish_reasons": tuple,
    "gen_ai.response.time_to_first_chunk": float,
    "gen_ai.usage.input_tokens": int,
    "gen_ai.usage.output_tokens": int,
    "server.port": int,
}
REQUIRED = ("gen_ai.operation.name", "gen_ai.provider.name")
OPERATIONS = {"invoke_agent": "invoke_agent", "chat": "chat", "execute_tool": "execute_tool"}
CONTENT = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
)
PART_TYPES = {"text", "tool_call", "tool_call_response", "reasoning"}


@pytest.fixture
def exporter():
    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "t"}, schema_url=SCHEMA_URL)
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider, memory
    provider.shutdown()


def check_conventions(spans):
    for span in spans:
        attributes = dict(span.attributes)
        for name in REQUIRED:
            assert name in attributes, (span.name, name)
        operation = attributes["gen_ai.operation.name"]
        assert span.name.split(" ", 1)[0] == operation in OPERATIONS
        for name, value in attributes.items():
            if name.startswith("agentnb."):
                continue
            assert name in REGISTRY, f"{name} is not in the conventions' registry"
            assert isinstance(value, TYPES.get(name, str)), (name, value)
        if operation == "chat":
            assert span.name == f"chat {attributes['gen_ai.request.model']}"
            assert span.kind is SpanKind.CLIENT
        elif operation == "execute_tool":
            assert span.name == f"execute_tool {attributes['gen_ai.tool.name']}"
            assert span.kind is SpanKind.INTERNAL
        else:
            assert span.name == f"invoke_agent {attributes['gen_ai.agent.name']}"
        assert span.end_time >= span.start_time


def check_parts(messages, output=False):
    assert isinstance(messages, list) and messages
    for m in messages:
        assert m["role"] in ("system", "user", "assistant", "tool")
        assert isinstance(m["parts"], list)
        for part in m["parts"]:
            assert part["type"] in PART_TYPES
            if part["type"] == "tool_call":
                assert {"id", "name", "arguments"} <= set(part)
            if part["type"] == "tool_call_response":
                assert {"id", "response"} <= set(part)
        if output:
            assert "finish_reason" in m


def test_a_run_exports_a_span_tree_that_mirrors_its_stages(exporter):
    provider, memory = exporter
    agent = an.travel.travel_agent()
    instrumentation = an.observe.instrument(provider)
    try:
        result = agent.run_sync("我周五从上海去北京出差，帮我看看航班和天气")
    finally:
        instrumentation.uninstrument()
    spans = memory.get_finished_spans()
    check_conventions(spans)
    (root,) = [s for s in spans if s.parent is None]
    assert root.name == f"invoke_agent {agent.name}"
    assert root.attributes["gen_ai.conversation.id"] == result.session.id
    assert root.attributes["agentnb.trace_id"] == result.trace_id
    children = sorted((s for s in spans if s.parent is not None), key=lambda s: s.start_time)
    assert all(s.parent.span_id == root.context.span_id for s in children)
    assert all(s.context.trace_id == root.context.trace_id for s in spans)
    # the children, in time order, are the run's model calls and tool calls in event order
    stages = [e for e in result.events if e.type in ("ModelResponded", "ToolStarted")]
    expected = [
        f"chat {agent.model.name}" if e.type == "ModelResponded" else f"execute_tool {e.name}"
        for e in stages
    ]
    assert [s.name for s in children] == expected
    assert sum(s.name.startswith("chat") for s in children) == result.iterations
    chats = [s for s in children if s.name.startswith("chat")]
    assert chats[-1].attributes["gen_ai.response.finish_reasons"] == ("stop",)
    tokens = sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats)
    assert root.attributes["gen_ai.usage.input_tokens"] == tokens == result.usage.prompt_tokens
    assert all(root.start_time <= s.start_time <= s.end_time <= root.end_time for s in children)
    assert not any(name in s.attributes for s in spans for name in CONTENT)  # content is opt-in
    assert root.resource.schema_url == SCHEMA_URL


def test_content_is_opt_in_and_in_the_parts_format(exporter):
    provider, memory = exporter
    instrumentation = an.observe.instrument(provider, content=True)
    try:
        result = an.travel.travel_agent().run_sync("我周五从上海去北京出差，帮我看看天气")
    finally:
        instrumentation.uninstrument()
    spans = memory.get_finished_spans()
    check_conventions(spans)
    chats = [s for s in spans if s.name.startswith("chat")]
    for span in chats:
        check_parts(json.loads(span.attributes["gen_ai.input.messages"]))
        check_parts(json.loads(span.attributes["gen_ai.output.messages"]), output=True)
        instructions = json.loads(span.attributes["gen_ai.system_instructions"])
        assert instructions[0]["type"] == "text" and instructions[0]["content"]
        assert json.loads(span.attributes["gen_ai.tool.definitions"])[0]["type"] == "function"
    first_out = json.loads(chats[0].attributes["gen_ai.output.messages"])[0]
    first_calls = result.events[[e.type for e in result.events].index("ModelResponded")].message
    calls = [p for p in first_out["parts"] if p["type"] == "tool_call"]
    assert [(p["id"], p["name"]) for p in calls] == [
        (c.id, c.function.name) for c in first_calls.calls
    ]
    if first_calls.reasoning_content:  # the stand-in says what it understood: a reasoning part
        assert {"type": "reasoning", "content": first_calls.reasoning_content} in first_out["parts"]
    second_in = json.loads(chats[1].attributes["gen_ai.input.messages"])
    responses = [p for m in second_in for p in m["parts"] if p["type"] == "tool_call_response"]
    call_ids = {p["id"] for p in calls}
    assert call_ids and call_ids <= {p["id"] for p in responses}  # a call and its result pair up
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert tools and all("gen_ai.tool.call.result" in s.attributes for s in tools)
    assert result.stop_reason == "final_answer"


def test_a_failing_tool_and_a_failed_run_carry_error_type(exporter):
    provider, memory = exporter

    @an.tool
    def broken(city: str) -> str:
        """Always fails."""
        raise RuntimeError("boom")

    model = an.models.ScriptedModel(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "broken", "arguments": '{"city": "x"}'},
                    }
                ],
            },
            {"role": "assistant", "content": "sorry"},
        ]
    )
    instrumentation = an.observe.instrument(provider)
    try:
        an.Agent("t", [broken], model=model).run_sync("go")
        failing = an.models.FunctionModel(lambda request: 1 / 0, name="zero")
        with pytest.raises(an.ModelCallFailed):
            an.Agent("t", [], model=failing).run_sync("go")
    finally:
        instrumentation.uninstrument()
    spans = memory.get_finished_spans()
    check_conventions(spans)
    (tool,) = [s for s in spans if s.name == "execute_tool broken"]
    assert (
        tool.status.status_code is StatusCode.ERROR
        and tool.attributes["error.type"] == "tool_error"
    )
    failed_root = [
        s for s in spans if s.parent is None and s.status.status_code is StatusCode.ERROR
    ]
    assert len(failed_root) == 1 and failed_root[0].attributes["error.type"] == "ModelCallFailed"


def test_proxied_calls_are_chat_spans_of_their_conversation(exporter, fault_server):
    provider, memory = exporter
    fault_server.script(reply("hi"), Step(chunks=text_chunks("a", "b")), Step(status=500, body={}))
    instrumentation = an.observe.instrument(provider, content=True)
    try:
        with an.observe.proxy(upstream=fault_server.base_url) as proxy:
            with openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as app:
                sent = [{"role": "user", "content": "hello"}]
                app.chat.completions.create(model="m", messages=sent, temperature=0.2, seed=3)
                sent += [
                    {"role": "assistant", "content": "hi"},
                    {"role": "user", "content": "more"},
                ]
                list(app.chat.completions.create(model="m", messages=sent, stream=True))
                with pytest.raises(openai.InternalServerError):
                    app.chat.completions.create(
                        model="m",
                        messages=[
                            *sent,
                            {"role": "assistant", "content": "ab"},
                            {"role": "user", "content": "x"},
                        ],
                    )
            (session,) = proxy.sessions
    finally:
        instrumentation.uninstrument()
    spans = memory.get_finished_spans()
    check_conventions(spans)
    assert [s.name for s in spans] == ["chat m"] * 3 and all(s.parent is None for s in spans)
    assert {s.attributes["gen_ai.provider.name"] for s in spans} == {"openai"}
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {session.id}
    whole, streamed, failed = spans
    assert whole.attributes["gen_ai.request.temperature"] == 0.2
    assert whole.attributes["gen_ai.request.seed"] == 3
    assert whole.attributes["gen_ai.usage.input_tokens"] == 11
    port = int(fault_server.base_url.rsplit(":", 1)[1].split("/")[0])
    for span in spans:  # the upstream, the API, the provider: issue 30
        assert span.attributes["server.address"] == "127.0.0.1"
        assert span.attributes["server.port"] == port
        assert span.attributes["gen_ai.provider.name"] == "openai"
        assert span.attributes["openai.api.type"] == "chat_completions"
    assert whole.attributes["gen_ai.response.id"] == "chatcmpl-fault"
    assert whole.attributes["gen_ai.response.model"] == "fault"
    assert "agentnb.usage.estimated" not in whole.attributes  # the upstream said
    assert streamed.attributes["agentnb.usage.estimated"] is True  # it sent none: estimated
    assert streamed.attributes["gen_ai.usage.input_tokens"] > 0  # never a silent 0
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert 0 <= streamed.attributes["gen_ai.response.time_to_first_chunk"] < 5
    assert failed.attributes["error.type"] == "500"
    assert failed.status.status_code is StatusCode.ERROR
    assert all(KEY not in json.dumps(dict(s.attributes)) for s in spans)


def test_a_proxied_call_is_a_child_of_the_span_the_app_sent(exporter, fault_server):
    provider, memory = exporter
    fault_server.script(reply("hi"))
    app_span = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = f"00-{app_span}-00f067aa0ba902b7-01"
    instrumentation = an.observe.instrument(provider)
    try:
        with (
            an.observe.proxy(upstream=fault_server.base_url) as proxy,
            openai.OpenAI(
                base_url=proxy.base_url,
                api_key=KEY,
                max_retries=0,
                default_headers={"traceparent": parent},
            ) as app,
        ):
            app.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
    finally:
        instrumentation.uninstrument()
    (span,) = memory.get_finished_spans()
    assert f"{span.context.trace_id:032x}" == app_span
    assert f"{span.parent.span_id:016x}" == "00f067aa0ba902b7" and span.parent.is_remote
    assert fault_server.requests[0]["headers"]["traceparent"] == parent  # forwarded as sent


def test_a_model_run_in_this_process_is_not_called_openai(exporter):
    """The embedded stand-in (and any model without a provider) is agentnb's own."""
    provider, memory = exporter
    instrumentation = an.observe.instrument(provider)
    try:
        an.travel.travel_agent().run_sync("周五北京天气")
        through = an.models.ScriptedModel(["ok"])
        an.Agent("t", [], model=through).run_sync("go")
    finally:
        instrumentation.uninstrument()
    spans = memory.get_finished_spans()
    check_conventions(spans)
    assert {s.attributes["gen_ai.provider.name"] for s in spans} == {"agentnb"}
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert tools and all(s.attributes["gen_ai.tool.description"] for s in tools)
    assert all("gen_ai.usage.input_tokens" in s.attributes for s in spans if "chat" in s.name)


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list] = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        _Collector.received.append((self.path, self.headers.get("content-type"), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_an_otlp_endpoint_receives_the_spans():
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Collector.received.clear()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        instrumentation = an.observe.instrument(endpoint=endpoint)
        try:
            an.travel.travel_agent().run_sync("周五北京天气")
        finally:
            instrumentation.uninstrument()
            instrumentation.provider.shutdown()  # flushes the batch
        assert instrumentation.provider.resource.schema_url == SCHEMA_URL
    finally:
        server.shutdown()
        server.server_close()
    assert _Collector.received
    path, kind, body = _Collector.received[0]
    assert path == "/v1/traces" and kind == "application/x-protobuf"
    assert b"invoke_agent" in body and b"gen_ai.operation.name" in body


def test_usage_details_become_the_genai_cache_attributes():
    from agentnb.models import Usage
    from agentnb.observe.otel import _usage

    class Span:
        def __init__(self):
            self.attributes = {}

        def set_attribute(self, name, value):
            self.attributes[name] = value

    span = Span()
    _usage(span, Usage(100, 50, 150, cached_tokens=64, cache_write_tokens=26, reasoning_tokens=9))
    assert span.attributes["gen_ai.usage.input_tokens"] == 100
    assert span.attributes["gen_ai.usage.cache_read.input_tokens"] == 64
    assert span.attributes["gen_ai.usage.cache_creation.input_tokens"] == 26
    assert span.attributes["agentnb.usage.reasoning_tokens"] == 9
    plain = Span()
    _usage(plain, Usage(100, 50, 150))
    assert not any("cache" in k or "reasoning" in k for k in plain.attributes)
