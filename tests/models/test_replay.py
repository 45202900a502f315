"""Cassettes: record real exchanges, replay them offline, and say what differs on a miss."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest

import agentnb as an
from agentnb.errors import CassetteMiss, ConfigurationError
from agentnb.models import Cassette, ModelRequest, ReplyAssembler
from agentnb.models.replay import record, replay
from tests.models.openai_helpers import KEY, completion, json_of, model_for, sse


def travel_server():
    """A handler that plays a two-step travel exchange (a tool call, then an answer)."""

    def handler(request):
        body = json_of(request)
        if body["messages"][-1]["role"] == "tool":
            message = {"role": "assistant", "content": "北京周五晴，-3~5°C。"}
            return httpx.Response(200, json=completion(message), headers={"x-request-id": "r2"})
        call = {
            "id": "call_w",
            "type": "function",
            "function": {
                "name": "search_weather",
                "arguments": '{"city": "北京", "date": "2025-01-10"}',
            },
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return httpx.Response(200, json=completion(message, "tool_calls"))

    return handler


async def test_a_recorded_run_replays_offline_identically(tmp_path):
    path = tmp_path / "trip.jsonl"
    live = model_for(travel_server(), params={"temperature": 0})
    first, second = an.Session(), an.Session()
    recorded = await an.travel.travel_agent(model=Cassette(path).record(live)).run(
        "周五北京天气？", session=first
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    entry = json.loads(lines[0])
    assert set(entry) == {"key", "request", "response", "client"}
    assert entry["request"]["path"] == "/v1/chat/completions" and "headers" not in entry["request"]
    assert (
        entry["client"]["params"] == {"temperature": 0} and entry["client"]["profile"] == "openai"
    )
    assert KEY not in path.read_text(encoding="utf-8"), "auth is never stored"

    replayed = await an.travel.travel_agent(model=Cassette(path).replay()).run(
        "周五北京天气？", session=second
    )
    assert replayed.stop_reason == recorded.stop_reason == "final_answer"
    assert replayed.output == recorded.output
    assert second.to_openai() == first.to_openai() and second.is_valid


async def test_a_miss_names_the_difference(tmp_path):
    path = tmp_path / "trip.jsonl"
    await an.travel.travel_agent(model=record(model_for(travel_server()), path)).run(
        "周五北京天气？"
    )
    model = replay(path)
    with pytest.raises(CassetteMiss) as info:
        await an.travel.travel_agent(model=model).run("周六上海天气？")
    assert "message 1 differs" in info.value.difference
    assert "周六上海" in info.value.difference and "周五北京" in info.value.difference
    with pytest.raises(CassetteMiss, match=r"temperature: recorded null, now 0\.5"):
        await an.travel.travel_agent(model=replay(path, params={"temperature": 0.5})).run(
            "周五北京天气？"
        )


async def test_identical_requests_get_their_answers_in_order(tmp_path):
    answers = iter(["one", "two"])

    def handler(request):
        return httpx.Response(200, json=completion({"role": "assistant", "content": next(answers)}))

    path = tmp_path / "same.jsonl"
    live = record(model_for(handler), path)
    req = ModelRequest([{"role": "user", "content": "again"}])
    assert [(await live.complete(req)).message.text for _ in range(2)] == ["one", "two"]
    offline = replay(path)
    assert [(await offline.complete(req)).message.text for _ in range(3)] == ["one", "two", "two"]


async def test_streams_record_their_chunks_and_replay_them(tmp_path):
    chunks = [{"choices": [{"delta": {"content": p}}]} for p in ("北", "京", "晴")]
    chunks.append({"choices": [{"delta": {}, "finish_reason": "stop"}]})

    def handler(request):
        return httpx.Response(
            200, content=sse(*chunks), headers={"content-type": "text/event-stream"}
        )

    path = tmp_path / "stream.jsonl"
    req = ModelRequest([{"role": "user", "content": "天气"}])
    live = record(model_for(handler, stream=True), path)
    first = [d.raw async for d in live.stream(req) if d.raw]
    offline = replay(path)
    assert offline.streaming
    again = [d async for d in offline.stream(req)]
    assert [d.raw for d in again if d.raw] == first
    assembler = ReplyAssembler()
    for d in again:
        assembler.add(d)
    assert assembler.result().message.text == "北京晴"


async def test_compressed_bodies_are_stored_decoded(tmp_path):
    body = json.dumps(completion({"role": "assistant", "content": "压缩"})).encode()

    def handler(request):
        return httpx.Response(
            200,
            content=gzip.compress(body),
            headers={"content-encoding": "gzip", "content-type": "application/json"},
        )

    path = tmp_path / "gz.jsonl"
    req = ModelRequest([{"role": "user", "content": "x"}])
    assert (await record(model_for(handler), path).complete(req)).message.text == "压缩"
    assert (await replay(path).complete(req)).message.text == "压缩"


def test_bad_cassettes_are_configuration_errors(tmp_path):
    with pytest.raises(ConfigurationError, match="missing or empty"):
        replay(tmp_path / "none.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(ConfigurationError, match=r"broken\.jsonl:1"):
        Cassette(broken)


async def test_a_miss_shows_where_two_long_prompts_first_differ(tmp_path):
    path = tmp_path / "long.jsonl"
    head = "行程说明：" + "这是一段很长的背景介绍，" * 30  # ~370 characters before the change
    await an.travel.travel_agent(model=record(model_for(travel_server()), path)).run(
        head + "周五北京天气？"
    )
    with pytest.raises(CassetteMiss) as info:
        await an.travel.travel_agent(model=replay(path)).run(head + "周六北京天气？")
    text = info.value.difference
    at = len(head) + 1  # 周五 / 周六: the second character after the head differs
    assert f"messages[1].content at character {at}:" in text, text
    recorded, now = text.split("recorded ", 1)[1].split(", now ")
    assert "周五北京" in recorded and "周六北京" in now  # the spot itself, in both
    assert recorded.startswith("'…") and "背景介绍" in recorded  # with context before it
    assert head[:40] not in text  # not the common beginning
