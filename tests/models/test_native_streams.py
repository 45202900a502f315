"""ResponsesModel and AnthropicModel over httpx.MockTransport: streams shaped like the APIs'
documented events (an error mid-stream, a stream that breaks off), and the key masked in
every header spelling and query form, in events, errors, cassettes and the view."""

from __future__ import annotations

import json

import httpx
import pytest

import agentnb as an
from agentnb.errors import ModelHTTPError, ModelStreamError
from agentnb.models import ModelRequest
from agentnb.models.openai.retry import RetryPolicy
from agentnb.models.replay import record
from agentnb.widgets import payload

KEY = "sk-ant-live-ABCDEF0123456789xyz"
REQ = ModelRequest([{"role": "user", "content": "hi"}])


def events(*pairs: tuple[str, dict]) -> bytes:
    return "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in pairs).encode()


def anthropic_stream(text: str, *, error: bool = False, stop: bool = True) -> bytes:
    """Anthropic's documented order: message_start, content_block_start/delta/stop,
    message_delta, message_stop (and a ping); an ``error`` event mid-stream when asked."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 12, "cache_read_input_tokens": 4, "output_tokens": 1}}  # fmt: skip
    pairs = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "thinking_delta", "thinking": "plan it"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "signature_delta", "signature": "c2lnbmVk"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("ping", {"type": "ping"}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "text_delta", "text": text}}),
    ]  # fmt: skip
    if error:
        pairs.append(("error", {"type": "error",
                                "error": {"type": "overloaded_error", "message": "Overloaded"}}))  # fmt: skip
    pairs.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    if stop:
        pairs += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                               "stop_sequence": None}, "usage": {"output_tokens": 9}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
    return events(*pairs)


def responses_stream(text: str, *, error: bool = False) -> bytes:
    """The Responses API's documented events: response.created ... response.completed, or
    an ``error`` / ``response.failed`` event mid-stream."""
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA=="}
    done = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-x",
        "output": [reasoning, item],
        "usage": {
            "input_tokens": 20,
            "input_tokens_details": {"cached_tokens": 8},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 24},
            "total_tokens": 50,
        },
    }
    pairs = [
        ("response.created", {"type": "response.created", "sequence_number": 0,
                              "response": {**done, "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": reasoning, "sequence_number": 1}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": reasoning, "sequence_number": 2}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_1",
                                        "output_index": 1, "content_index": 0, "delta": text,
                                        "sequence_number": 3}),
    ]  # fmt: skip
    if error:
        pairs.append(("response.failed", {"type": "response.failed", "sequence_number": 4,
                      "response": {**done, "status": "failed", "output": [],
                                   "error": {"code": "server_error", "message": "The model failed"}}}))  # fmt: skip
    else:
        pairs.append(("response.completed", {"type": "response.completed", "response": done,
                                             "sequence_number": 4}))  # fmt: skip
    return events(*pairs)


def _model(api: str, body: bytes, **options):
    answer = lambda request: httpx.Response(  # noqa: E731
        200, headers={"content-type": "text/event-stream"}, content=body
    )
    cls = an.models.AnthropicModel if api == "anthropic" else an.models.ResponsesModel
    return cls("m", base_url="https://api.example.test/v1", api_key=KEY, stream=True,
               transport=httpx.MockTransport(answer), **options)  # fmt: skip


async def _collect(model):
    assembler = an.models.ReplyAssembler()
    async for delta in model.stream(REQ):
        assembler.add(delta)
    return assembler.result()


async def test_a_documented_anthropic_stream_is_read_whole_with_its_signature_and_usage():
    reply = await _collect(_model("anthropic", anthropic_stream("你好")))
    wire = reply.message.to_openai()
    assert wire["content"] == "你好" and wire["reasoning_content"] == "plan it"
    assert wire["provider_data"]["reasoning"] == [
        {"type": "thinking", "thinking": "plan it", "signature": "c2lnbmVk"}
    ]
    assert reply.finish_reason == "stop"
    assert reply.usage is not None and (reply.usage.prompt_tokens, reply.usage.cached_tokens) == (
        16,
        4,
    )


async def test_a_documented_responses_stream_keeps_the_encrypted_item_and_the_usage():
    reply = await _collect(_model("responses", responses_stream("hi")))
    data = reply.message.to_openai()["provider_data"]
    assert (
        data["reasoning"][0]["encrypted_content"] == "gAAAA==" and data["response_id"] == "resp_1"
    )
    assert reply.usage is not None and reply.usage.reasoning_tokens == 24


@pytest.mark.parametrize(
    ("api", "body", "said"),
    [
        ("anthropic", anthropic_stream("x", error=True), "Overloaded"),
        ("anthropic", anthropic_stream("x", stop=False), "broke off"),
        ("responses", responses_stream("x", error=True), "The model failed"),
        ("responses", responses_stream("x").split(b"event: response.completed")[0], "broke off"),
    ],
    ids=["anthropic-error", "anthropic-cut", "responses-failed", "responses-cut"],
)
async def test_an_error_mid_stream_or_a_cut_stream_is_a_stream_error(api, body, said):
    with pytest.raises(ModelStreamError, match=said):
        await _collect(_model(api, body))


WAYS = {
    "argument": {"api_key": KEY},
    "header-x-api-key": {"api_key": None, "headers": {"X-Api-Key": KEY}},
    "header-authorization": {"api_key": None, "headers": {"Authorization": f"Bearer {KEY}"}},
    "query-key": {"api_key": None, "query": {"key": KEY}},
    "query-API_KEY": {"api_key": None, "query": {"API_KEY": KEY}},
    "url-userinfo": {"api_key": None, "base_url": f"https://me:{KEY}@h.test/v1"},
}


def _echo(request: httpx.Request) -> str:
    seen = [request.headers.get(h, "") for h in ("authorization", "x-api-key")]
    return " ".join([*seen, str(request.url)])


@pytest.mark.parametrize("api", ["anthropic", "responses"])
@pytest.mark.parametrize("way", sorted(WAYS))
async def test_the_key_is_masked_everywhere_a_native_model_passes_it_on(api, way, tmp_path):
    calls = []

    def server(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        echo = _echo(request)
        if json.loads(request.content).get("stream"):
            body = anthropic_stream(echo) if api == "anthropic" else responses_stream(echo)
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
        return httpx.Response(401, json={"error": {"message": f"bad key {echo}"}})

    options = {"base_url": "https://api.example.test/v1", **WAYS[way]}
    cls = an.models.AnthropicModel if api == "anthropic" else an.models.ResponsesModel
    texts = []
    for stream in (False, True):
        model = cls("m", stream=stream, transport=httpx.MockTransport(server),
                    retry=RetryPolicy(attempts=1), profile="anthropic-compatible" if api == "anthropic" else "generic",
                    **options)  # fmt: skip
        recorded = record(model, tmp_path / f"{api}-{stream}.jsonl")
        texts += [repr(model), repr(vars(model))]
        session = an.Session()
        agent = an.Agent("x", [], model=recorded, max_iterations=1)
        if stream:
            result = await agent.run("hi", session=session)
            texts += [repr(e) for e in result.events] + [str(e.fields()) for e in result.events]
            texts += [json.dumps(session.to_openai(), ensure_ascii=False)]
            texts += [json.dumps(session._repr_mimebundle_(), ensure_ascii=False)]
            texts += [repr(payload.unpack(payload.pack({"messages": session.to_openai()})))]
        else:
            with pytest.raises(ModelHTTPError) as info:
                await agent.run("hi", session=session)
            texts += [str(info.value), repr(info.value), info.value.body or ""]
    texts += [p.read_text(encoding="utf-8") for p in tmp_path.iterdir()]
    everything = "\n".join(texts)
    sent = " ".join(_echo(c) for c in calls)
    assert KEY in sent  # the server did get it ...
    assert KEY not in everything and KEY[7:20] not in everything  # ... and nothing kept it
    assert "***" in everything


WHOLE = {
    "anthropic": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                  "usage": {"input_tokens": 3, "output_tokens": 1}},
    "responses": {"id": "resp_1", "object": "response", "status": "completed", "model": "m",
                  "output": [{"type": "message", "role": "assistant", "id": "m1",
                              "content": [{"type": "output_text", "text": "ok"}]}]},
}  # fmt: skip


@pytest.mark.parametrize("api", ["anthropic", "responses"])
async def test_the_same_retries_size_bound_and_deadline_as_openai_model(api):
    from tests.models.openai_helpers import Body, Recorder

    cls = an.models.AnthropicModel if api == "anthropic" else an.models.ResponsesModel
    answers = [httpx.Response(429, headers={"retry-after": "0"}, json={"error": {"message": "slow"}}),
               httpx.Response(200, json=WHOLE[api])]  # fmt: skip
    sleep = Recorder()
    model = cls("m", api_key=KEY, base_url="https://h.test/v1", retry=RetryPolicy(attempts=3, sleep=sleep),
                transport=httpx.MockTransport(lambda request: answers.pop(0)))  # fmt: skip
    reply = await model.complete(REQ)
    assert reply.message.text == "ok" and answers == [] and len(sleep.waits) == 1

    big = httpx.MockTransport(
        lambda request: httpx.Response(200, content=b"{" + b" " * 5000 + b"}")
    )
    bounded = cls("m", api_key=KEY, base_url="https://h.test/v1", transport=big,
                  max_response_bytes=1000)  # fmt: skip
    with pytest.raises(an.errors.ModelResponseError, match="max_response_bytes=1,000"):
        await bounded.complete(REQ)

    stalled = httpx.MockTransport(
        lambda request: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                       stream=Body([b": ping\n\n"] * 50, stall=0.05))
    )  # fmt: skip
    late = cls("m", api_key=KEY, base_url="https://h.test/v1", transport=stalled, stream=True,
               total_timeout=0.3)  # fmt: skip
    with pytest.raises(an.errors.AgentnbError, match="did not finish in time"):
        await _collect(late)
