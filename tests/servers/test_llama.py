"""The real llama.cpp server with SmolLM2-135M (the `local` extra; `make test` installs it).

Assert structure, never wording: the tiny model's output varies with the server's cache.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest

import agentnb as an
from agentnb.models import ModelRequest, ReplyAssembler
from tests.helpers import WEATHER

pytestmark = pytest.mark.local_model


async def test_the_build_generates_a_whole_reply(llama_server):
    model = llama_server.model("smollm2", params={"max_tokens": 8, "temperature": 0})
    started = time.monotonic()
    response = await model.complete(ModelRequest([{"role": "user", "content": "Say hi."}]))
    assert response.message.text and response.finish_reason in ("stop", "length")
    assert response.usage and 0 < response.usage.completion_tokens <= 8
    assert time.monotonic() - started < 60


async def test_a_streamed_reply_arrives_in_chunks(llama_server):
    model = llama_server.model("smollm2", stream=True, params={"max_tokens": 16, "temperature": 0})
    request = ModelRequest([{"role": "user", "content": "Name a city."}])
    deltas = [d async for d in model.stream(request)]
    assembler = ReplyAssembler()
    for d in deltas:
        assembler.add(d)
    reply = assembler.result()
    assert reply.message.text and reply.finish_reason in ("stop", "length")
    raws = [json.loads(d.raw) for d in deltas if d.raw]
    assert len(raws) >= 3 and all(r["object"] == "chat.completion.chunk" for r in raws)
    assert reply.usage is None, "llama-cpp-python streams never carry usage"


async def test_automatic_tool_choice_gives_a_real_tool_call(llama_server):
    model = llama_server.model("smollm2-tools", total_timeout=240)
    request = ModelRequest(
        [
            {"role": "system", "content": "You are a travel assistant. Use the tools."},
            {"role": "user", "content": "What is the weather in Beijing on 2025-01-10?"},
        ],
        [WEATHER],
    )
    response = await model.complete(request)
    for call in response.message.calls:  # the model may also answer in text: both are valid
        assert call.function.name == "search_weather" and call.id.startswith("call_")
        json.loads(call.function.arguments)


async def test_a_tool_history_is_accepted_thanks_to_the_profile(llama_server):
    # content: null on an assistant tool-call message is HTTP 500 on this server unless fixed
    model = llama_server.model("smollm2", params={"max_tokens": 16, "temperature": 0})
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "search_weather", "arguments": "{}"},
    }
    request = ModelRequest(
        [
            {"role": "user", "content": "Weather in Beijing?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"condition": "sunny"}'},
        ],
        [WEATHER],
        {"tool_choice": "required"},
    )
    response = await model.complete(request)
    assert any("tool_choice 'required'" in r for r in response.repairs)


@pytest.mark.parametrize("stream", [False, True])
async def test_the_travel_assistant_completes_a_run_whatever_the_model_decides(
    llama_server, stream
):
    model = llama_server.model(
        "smollm2", stream=stream, text_actions=True, params={"max_tokens": 96, "temperature": 0}
    )
    agent = an.travel.travel_agent(model=model, language="en", max_iterations=2)
    session = an.Session()
    result = await agent.run("What is the weather in Beijing on Friday?", session=session)
    assert result.stop_reason in an.STOP_REASONS and result.stop_reason != "error"
    assert session.is_valid and session.problems == []
    assert result.output


def test_a_server_starts_answers_and_stops_cleanly():
    pytest.importorskip("llama_cpp", reason="the `local` extra is not installed")
    from agentnb.models.local import LocalServer

    with LocalServer() as server:
        assert server.running
        assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200
        process = server.process
    assert not server.running and process.poll() is not None
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.base_url}/models", timeout=2)


async def test_one_argument_switches_between_the_four_kinds_of_model(llama_server, fault_server):
    from pathlib import Path

    from agentnb.models import Cassette, OpenAIModel
    from tests.servers.fault_server import reply

    question = "What is the weather in Beijing on Friday, and is there a flight from Shanghai?"
    cassette = (
        Path(__file__).resolve().parents[2] / "data" / "cassettes" / "travel_smollm2_tools.jsonl"
    )
    fault_server.script(reply("Sunny in Beijing."))
    models = {
        "TravelModel": None,
        "OpenAIModel": OpenAIModel("any", base_url=fault_server.base_url, profile="generic"),
        "local": llama_server.model(
            "smollm2", text_actions=True, params={"max_tokens": 48, "temperature": 0}
        ),
        "cassette": Cassette(cassette).replay(),
    }
    for name, model in models.items():
        session = an.Session()
        agent = an.travel.travel_agent(model=model, language="en", max_iterations=3)
        result = await agent.run(question, session=session)
        assert result.stop_reason in an.STOP_REASONS and result.stop_reason != "error", name
        assert session.is_valid and session.problems == [], name


@an.tool
def archive() -> str:
    """The archive's page on Beijing."""
    return " ".join(
        f"line {i} of the archive about travel and weather in Beijing" for i in range(160)
    )


async def test_a_long_session_on_the_local_server_is_trimmed_to_its_window(llama_server):
    """Issue 36: server.model() did not say the server's 4096-token window, so an agent on it
    kept the whole history and the third turn of a session with long tool results ended in
    HTTP 400 ('maximum context length is 4096 tokens'). Now the agent adopts the window and
    drops the oldest turn."""
    forced = {"tool_choice": {"type": "function", "function": {"name": "archive"}}}
    model = llama_server.model("smollm2", params={"temperature": 0, "seed": 0, "max_tokens": 32})
    assert model.context_window == llama_server.n_ctx == 4096
    agent = an.Agent("Use the archive.", [archive], model=model, max_iterations=1,
                     model_params=forced)  # fmt: skip
    assert agent.context_window == 4096  # adopted: the agent was given none
    session = an.Session()
    for question in ("What is in the archive?", "And more?", "And the rest?"):
        result = await agent.run(question, session=session)
        assert result.stop_reason == "max_iterations", result.stop_detail  # not an HTTP 400
    last = session.requests[-1]
    assert last.budget["context_window"] == 4096 and last.budget["available"] >= 0
    assert last.policy == "drop_oldest" and "dropped the" in last.note
    assert len(session.messages) == 9 and last.request.size < 9
