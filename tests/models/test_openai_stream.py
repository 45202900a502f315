"""SSE streaming over httpx.MockTransport: assembly by index, raw chunks, usage, breakage."""

from __future__ import annotations

import asyncio
import itertools
import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentnb.errors import ModelHTTPError, ModelStreamError
from agentnb.models import ModelRequest, ReplyAssembler
from tests.helpers import eventually
from tests.models.openai_helpers import Body, json_of, model_for, sse

REQ = ModelRequest([{"role": "user", "content": "周五上海到北京"}])


def tool_chunk(index, *, id=None, name=None, args=""):
    function = {"arguments": args}
    if name:
        function["name"] = name
    call = {"index": index, "function": function}
    if id:
        call.update(id=id, type="function")
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}


async def collect(model, request=REQ):
    deltas = [d async for d in model.stream(request)]
    assembler = ReplyAssembler()
    for d in deltas:
        assembler.add(d)
    return deltas, assembler.result()


async def test_interleaved_calls_assemble_by_index_with_usage_from_the_last_chunk():
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        tool_chunk(0, id="a", name="search_flights", args='{"departure": "上'),
        tool_chunk(1, id="b", name="search_weather", args='{"city": '),
        tool_chunk(0, args='海", "destination": "北京"}'),
        tool_chunk(1, args='"\\u5317\\u4eac"}'),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}},
    ]
    seen = []

    def handler(request):
        seen.append(json_of(request))
        return httpx.Response(
            200, content=sse(*chunks), headers={"content-type": "text/event-stream"}
        )

    deltas, reply = await collect(model_for(handler, stream=True))
    assert seen[0]["stream"] is True and seen[0]["stream_options"] == {"include_usage": True}
    a, b = reply.message.calls
    assert (a.id, a.function.name, json.loads(a.function.arguments)) == (
        "a",
        "search_flights",
        {"departure": "上海", "destination": "北京"},
    )
    assert (b.id, b.function.name, json.loads(b.function.arguments)) == (
        "b",
        "search_weather",
        {"city": "北京"},
    )
    assert reply.finish_reason == "tool_calls" and reply.usage.total_tokens == 29
    raws = [d.raw for d in deltas if d.raw is not None]
    assert raws == [json.dumps(c, ensure_ascii=False) for c in chunks], (
        "every chunk kept verbatim, once"
    )


async def test_a_server_repeating_id_and_name_in_every_chunk():
    chunks = [
        tool_chunk(0, id="call__0_f", name="search_weather", args=p) for p in ('{"ci', 'ty": "X"}')
    ]
    chunks.append({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})
    deltas, reply = await collect(
        model_for(lambda r: httpx.Response(200, content=sse(*chunks)), stream=True)
    )
    assert [d.tool_name for d in deltas if d.tool_index is not None] == ["search_weather", None]
    call = reply.message.calls[0]
    assert (call.id, call.function.name, call.function.arguments) == (
        "call__0_f",
        "search_weather",
        '{"city": "X"}',
    )


async def test_reasoning_and_text_deltas():
    chunks = [
        {"choices": [{"delta": {"reasoning_content": "think"}}]},
        {"choices": [{"delta": {"content": "答"}}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}]},
    ]
    _, reply = await collect(
        model_for(lambda r: httpx.Response(200, content=sse(*chunks)), stream=True)
    )
    assert reply.message.text == "答" and reply.message.reasoning_content == "think"


ARGS = json.dumps({"city": "北京", "note": 'a "quoted" \\ path ☃'}, ensure_ascii=True)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    arg_cuts=st.lists(st.integers(0, len(ARGS)), max_size=6),
    byte_cuts=st.lists(st.integers(0, 2000), max_size=12),
)
async def test_arguments_and_bytes_split_anywhere(arg_cuts, byte_cuts):
    cuts = sorted({0, len(ARGS), *arg_cuts})
    pieces = [ARGS[i:j] for i, j in itertools.pairwise(cuts)]
    chunks = [tool_chunk(0, id="c", name="search_weather", args=pieces[0])]
    chunks += [tool_chunk(0, args=p) for p in pieces[1:]]
    chunks.append({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})
    data = sse(*chunks)
    points = sorted({0, len(data), *(c for c in byte_cuts if c < len(data))})
    parts = [data[i:j] for i, j in itertools.pairwise(points)]

    def handler(request):
        return httpx.Response(200, stream=Body(parts))

    _, reply = await collect(model_for(handler, stream=True))
    assert reply.message.calls[0].function.arguments == ARGS
    assert json.loads(reply.message.calls[0].function.arguments)["city"] == "北京"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (
            sse({"choices": [{"delta": {"content": "half"}}]}, done=False),
            "broke off after 1 chunks",
        ),
        (b"", "before any chunk"),
        (sse("{oops"), "chunk 1 is not JSON"),
        (sse({"error": {"message": "overloaded"}}), "error mid-stream: overloaded"),
    ],
)
async def test_broken_streams_are_errors_not_partial_replies(content, match):
    model = model_for(lambda r: httpx.Response(200, content=content), stream=True)
    with pytest.raises(ModelStreamError, match=match):
        await collect(model)


async def test_a_connection_lost_mid_stream_is_a_stream_error_and_closes_the_body():
    body = Body(
        [sse({"choices": [{"delta": {"content": "x"}}]}, done=False)],
        error=httpx.ReadError("reset"),
    )
    model = model_for(lambda r: httpx.Response(200, stream=body), stream=True)
    with pytest.raises(ModelStreamError, match="connection failed after 1 chunks"):
        await collect(model)
    assert body.closed


async def test_closing_the_stream_early_closes_the_http_response():
    chunks = [{"choices": [{"delta": {"content": str(i)}}]} for i in range(50)]
    body = Body([sse(c, done=False) for c in chunks])
    model = model_for(lambda r: httpx.Response(200, stream=body), stream=True)
    stream = model.stream(REQ)
    first = await anext(stream)
    assert first.text == "0"
    await stream.aclose()
    assert body.closed and body.sent < 50


async def test_cancelling_a_stream_closes_the_http_response():
    chunks = [{"choices": [{"delta": {"content": str(i)}}]} for i in range(50)]
    body = Body([sse(c, done=False) for c in chunks], stall=0.01)
    model = model_for(lambda r: httpx.Response(200, stream=body), stream=True)
    got = []

    async def consume():
        async for d in model.stream(REQ):
            got.append(d)

    task = asyncio.create_task(consume())
    await eventually(lambda: len(got) >= 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert body.closed


async def test_cancelling_a_whole_call_cancels_the_request():
    started = asyncio.Event()

    async def handler(request):
        started.set()
        await asyncio.sleep(30)
        return httpx.Response(200, json={})

    model = model_for(handler)
    task = asyncio.create_task(model.complete(REQ))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_stream_that_never_finishes_hits_the_total_timeout():
    chunks = [{"choices": [{"delta": {"content": "."}}]}] * 1000
    body = Body([sse(c, done=False) for c in chunks], stall=0.02)
    model = model_for(lambda r: httpx.Response(200, stream=body), stream=True, total_timeout=0.1)
    with pytest.raises(ModelStreamError, match="did not finish in time"):
        await collect(model)
    assert body.closed


async def test_a_stream_refused_with_an_http_error_is_retried_then_raised():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(503, text="busy")

    with pytest.raises(ModelHTTPError) as info:
        await collect(model_for(handler, stream=True))
    assert info.value.status == 503 and info.value.attempts == 4 and len(calls) == 4
