"""The proxy in front of the real llama.cpp server with SmolLM2 (the `local` extra).

The app is the openai SDK, unchanged but for its base URL: a forced tool call, the tool's
result, a text answer, then a streamed follow-up. Assert structure, never wording.
"""

from __future__ import annotations

import json

import openai
import pytest

import agentnb as an
from tests.helpers import WEATHER
from tests.observe.observe_helpers import KEY, canonical

pytestmark = pytest.mark.local_model


def search_weather(city: str = "", date: str = "", **_: object) -> dict:
    return {"city": city, "date": date, "sky": "sunny", "high_c": 6}


def test_a_tool_using_conversation_through_the_proxy(llama_server, tmp_path):
    with (
        an.observe.proxy(upstream=llama_server.base_url) as proxy,
        openai.OpenAI(base_url=proxy.base_url, api_key=KEY, timeout=240) as app,
    ):
        sent = [
            {"role": "system", "content": "You are a travel assistant. Use the tools."},
            {"role": "user", "content": "What is the weather in Beijing on 2025-01-10?"},
        ]
        forced = {"type": "function", "function": {"name": "search_weather"}}
        first = app.chat.completions.create(
            model="smollm2",
            messages=sent,
            tools=[WEATHER],
            tool_choice=forced,
            max_tokens=48,
            temperature=0,
        )
        message = first.choices[0].message
        assert message.tool_calls, "a forced tool choice gives a tool call"
        call = message.tool_calls[0]
        # the app runs the tool; llama.cpp wants content "" (not null) on assistant messages
        sent.append(
            {
                "role": "assistant",
                "content": message.content or "",
                "tool_calls": [call.model_dump()],
            }
        )
        try:
            arguments = json.loads(call.function.arguments)
        except ValueError:
            arguments = {}
        result = search_weather(**arguments) if isinstance(arguments, dict) else {}
        sent.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        second = app.chat.completions.create(
            model="smollm2", messages=sent, max_tokens=32, temperature=0
        )
        sent.append({"role": "assistant", "content": second.choices[0].message.content or ""})
        sent.append({"role": "user", "content": "And should I take a coat?"})
        with app.chat.completions.with_streaming_response.create(
            model="smollm2", messages=sent, max_tokens=24, temperature=0, stream=True
        ) as response:
            streamed = b"".join(response.iter_bytes())
        text = ""
        for line in streamed.decode().splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunk = json.loads(line[6:])
                if chunk.get("choices"):
                    text += chunk["choices"][0]["delta"].get("content") or ""
        sent.append({"role": "assistant", "content": text})

        (session,) = proxy.sessions
        assert canonical(session.to_openai()) == canonical(sent)  # message for message
        assert session.is_valid, session.problems  # the call in reply 1, its result in request 2
        assert [c.status for c in proxy.calls] == [200, 200, 200]
        assert proxy.calls[2].stream and proxy.calls[2].response.encode() == streamed
        assert proxy.calls[2].first_chunk is not None
        assert len(session.requests) == 3 and session.requests[0].request.tools == [WEATHER]
        path = proxy.save_cassette(tmp_path / "smollm2.jsonl")
    assert KEY not in path.read_text(encoding="utf-8")
    # offline: the openai SDK gets the same replies from the cassette
    import asyncio

    import httpx

    from agentnb.models.replay import ReplayTransport

    async def again():
        offline = openai.AsyncOpenAI(
            base_url="http://cassette.invalid/v1",
            api_key="x",
            http_client=httpx.AsyncClient(transport=ReplayTransport(an.models.Cassette(path))),
        )
        answer = await offline.chat.completions.create(
            model="smollm2", messages=sent[:4], max_tokens=32, temperature=0
        )
        await offline.close()
        return answer.choices[0].message.content

    assert asyncio.run(again()) == sent[4]["content"]
