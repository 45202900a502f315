"""The recorded SmolLM2 cassettes in data/cassettes replay the same runs offline."""

from __future__ import annotations

import json
from pathlib import Path

import agentnb as an
from agentnb.models import Cassette

CASSETTES = Path(__file__).resolve().parents[2] / "data" / "cassettes"
# The settings tests/servers/record_cassettes.py recorded with.
QUESTION = "What is the weather in Beijing on Friday, and is there a flight from Shanghai?"
PLAIN = "In one sentence: why do travel agents check the weather?"


def recorded_calls(cassette: Cassette) -> list[str]:
    names = []
    for entry in cassette.entries:
        message = json.loads(entry["response"]["body"])["choices"][0]["message"]
        names += [c["function"]["name"] for c in message.get("tool_calls") or []]
    return names


async def test_the_travel_run_on_smollm2_replays_offline():
    cassette = Cassette(CASSETTES / "travel_smollm2_tools.jsonl")
    model = cassette.replay()
    assert model.model == "smollm2-tools" and model.profile.name == "llama-cpp-python"
    agent = an.travel.travel_agent(model=model, language="en", max_iterations=3)
    session = an.Session()
    result = await agent.run(QUESTION, session=session)
    assert result.stop_reason in ("final_answer", "max_iterations", "repeated_action")
    assert session.is_valid and session.problems == []
    wire = session.to_openai()
    calls = [
        c["function"]["name"]
        for m in wire
        if m["role"] == "assistant"
        for c in m.get("tool_calls", [])
    ]
    assert calls == recorded_calls(cassette), "the replay made exactly the recorded calls"
    model_calls = [e for e in result.events if type(e).__name__ == "ModelResponded"]
    assert len(model_calls) == len(cassette.entries), "every recorded exchange, once"


async def test_the_streamed_recording_replays_its_chunks():
    model = Cassette(CASSETTES / "plain_smollm2_stream.jsonl").replay()
    assert model.streaming
    agent = an.Agent("You are a helpful travel assistant.", [], model=model)
    result = await agent.run(PLAIN, session=an.Session())
    assert result.stop_reason == "final_answer" and result.output
    deltas = [e for e in result.events if type(e).__name__ == "ModelDelta"]
    assert len(deltas) > 5


def test_the_cassettes_hold_no_secrets_and_one_exchange_per_line():
    for path in CASSETTES.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            assert set(entry) == {"key", "request", "response", "client"}
            assert "headers" not in entry["request"]
            assert "authorization" not in line.lower()
