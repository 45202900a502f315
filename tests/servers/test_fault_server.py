"""OpenAIModel against a real socket: the fault-injecting server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

import agentnb as an
from agentnb.errors import ModelHTTPError, ModelResponseError, ModelStreamError
from agentnb.models import ModelRequest, OpenAIModel, ReplyAssembler, RetryPolicy
from tests.helpers import eventually
from tests.servers.fault_server import Step, completion, reply, text_chunks

REQ = ModelRequest([{"role": "user", "content": "周五北京天气？"}])


class Sleeps:
    def __init__(self):
        self.waits = []

    async def __call__(self, seconds):
        self.waits.append(seconds)


def model(server, *, stream=False, sleep=None, **kw):
    retry = RetryPolicy(sleep=sleep or Sleeps(), **kw.pop("retry", {}))
    return OpenAIModel(
        "fault", base_url=server.base_url, profile="generic", stream=stream, retry=retry, **kw
    )


async def assemble(m, request=REQ):
    assembler = ReplyAssembler()
    deltas = []
    async for d in m.stream(request):
        deltas.append(d)
        assembler.add(d)
    return deltas, assembler.result()


async def test_a_whole_reply_over_a_socket(fault_server):
    fault_server.script(reply("晴"))
    response = await model(fault_server).complete(REQ)
    assert response.message.text == "晴" and response.usage.total_tokens == 14
    assert fault_server.requests[0]["body"]["messages"] == REQ.messages


async def test_429_with_retry_after_then_success(fault_server):
    fault_server.script(
        Step(status=429, headers={"Retry-After": "3"}, body={"error": "slow"}), reply()
    )
    sleep = Sleeps()
    response = await model(fault_server, sleep=sleep).complete(REQ)
    assert response.message.text == "ok" and sleep.waits == [3.0]
    assert len(fault_server.requests) == 2


async def test_500s_until_the_attempts_run_out(fault_server):
    fault_server.script(Step(status=500, body="boom", headers={"x-request-id": "abc"}))
    with pytest.raises(ModelHTTPError) as info:
        await model(fault_server, retry={"attempts": 3}).complete(REQ)
    assert (info.value.status, info.value.attempts, info.value.request_id) == (500, 3, "abc")
    assert "boom" in str(info.value) and len(fault_server.requests) == 3


async def test_a_dropped_connection_is_retried(fault_server):
    fault_server.script(Step(drop=True), reply("back"))
    response = await model(fault_server).complete(REQ)
    assert response.message.text == "back" and len(fault_server.requests) == 2


async def test_a_server_that_never_answers_times_out_with_a_typed_error(fault_server):
    fault_server.script(Step(delay=5))
    started = time.monotonic()
    with pytest.raises(ModelHTTPError, match="timed out") as info:
        await model(fault_server, timeout=0.2, retry={"attempts": 2}).complete(REQ)
    assert info.value.status is None and time.monotonic() - started < 3


async def test_malformed_json_is_a_readable_error(fault_server):
    fault_server.script(Step(body='{"choices": [{"message": '))
    with pytest.raises(ModelResponseError, match="invalid JSON"):
        await model(fault_server).complete(REQ)


async def test_a_slow_stream_delivers_deltas_as_they_arrive(fault_server):
    fault_server.script(Step(chunks=text_chunks("北", "京", "晴"), chunk_delay=0.05))
    m = model(fault_server, stream=True)
    stamps = []
    assembler = ReplyAssembler()
    async for d in m.stream(REQ):
        stamps.append(time.monotonic())
        assembler.add(d)
    assert assembler.result().message.text == "北京晴"
    assert stamps[-1] - stamps[0] > 0.1, "deltas arrived over time, not all at once"
    body = fault_server.requests[0]["body"]
    assert body["stream"] is True


async def test_a_truncated_stream_is_an_error(fault_server):
    fault_server.script(Step(chunks=text_chunks("a", "b", "c"), cut_after=2))
    with pytest.raises(ModelStreamError, match="after 2 chunks"):
        await assemble(model(fault_server, stream=True))


async def test_a_stream_without_done_or_finish_is_an_error(fault_server):
    fault_server.script(Step(chunks=text_chunks("a")[:-1], done=False))
    with pytest.raises(ModelStreamError, match="broke off"):
        await assemble(model(fault_server, stream=True))


async def test_malformed_json_mid_stream_is_an_error(fault_server):
    fault_server.script(Step(chunks=[*text_chunks("a")[:2], "{broken"]))
    with pytest.raises(ModelStreamError, match="chunk 3 is not JSON"):
        await assemble(model(fault_server, stream=True))


async def test_a_stall_mid_stream_hits_the_read_timeout(fault_server):
    fault_server.script(Step(chunks=text_chunks(*"abcdef"), chunk_delay=1.0))
    with pytest.raises(ModelStreamError):
        await assemble(model(fault_server, stream=True, timeout=0.3))


async def test_a_stream_refused_with_429_is_retried(fault_server):
    fault_server.script(
        Step(status=429, headers={"Retry-After": "0"}), Step(chunks=text_chunks("ok"))
    )
    _, reply_ = await assemble(model(fault_server, stream=True))
    assert reply_.message.text == "ok"


async def test_cancelling_a_run_mid_stream_leaves_a_valid_session(fault_server):
    fault_server.script(Step(chunks=text_chunks(*"abcdefghij"), chunk_delay=0.2))
    agent = an.Agent("Be brief.", [], model=model(fault_server, stream=True))
    session = an.Session()
    deltas: list[an.events.Event] = []
    session.subscribe(lambda e: deltas.append(e) if e.type == "ModelDelta" else None)
    task = asyncio.create_task(agent.run("hi", session=session))
    await eventually(lambda: deltas)  # mid-stream
    task.cancel()
    try:
        result = await task
    except asyncio.CancelledError:
        result = None
    if result is not None:
        assert result.stop_reason == "cancelled"
    assert session.is_valid


async def test_the_travel_agent_runs_over_http(fault_server):
    call = {
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "search_weather",
            "arguments": json.dumps({"city": "北京", "date": "2025-01-10"}),
        },
    }
    fault_server.script(
        Step(
            body=completion(
                {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
            )
        ),
        reply("北京周五晴。"),
    )
    agent = an.travel.travel_agent(model=model(fault_server))
    session = an.Session()
    result = await agent.run("周五北京天气怎么样？", session=session)
    assert result.stop_reason == "final_answer" and result.output == "北京周五晴。"
    assert session.is_valid and session.problems == []
    second = fault_server.requests[1]["body"]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_1"


async def test_a_slow_server_is_bounded_by_the_total_timeout(fault_server):
    fault_server.script(Step(delay=3))
    started = time.monotonic()
    with pytest.raises(ModelHTTPError, match="total_timeout"):
        await model(fault_server, timeout=10, total_timeout=0.3).complete(REQ)
    assert time.monotonic() - started < 2


async def test_generic_servers_get_no_stream_options_and_usage_is_then_estimated(fault_server):
    fault_server.script(Step(chunks=text_chunks("ok")))
    agent = an.Agent("Be brief.", [], model=model(fault_server, stream=True))
    result = await agent.run("hi", session=an.Session())
    assert "stream_options" not in fault_server.requests[0]["body"]
    responded = [e for e in result.events if type(e).__name__ == "ModelResponded"]
    assert responded[0].usage.estimated
