"""OpenAIModel over httpx.MockTransport: requests, whole replies, SSE streams, profiles."""

from __future__ import annotations

import json

import httpx
import pytest

import agentnb as an
from agentnb.errors import ConfigurationError, ModelResponseError
from agentnb.models import ModelRequest, OpenAIModel, ReplyAssembler
from agentnb.models.openai.profiles import PROFILES, Profile, detect_profile
from tests.models.openai_helpers import KEY, completion, json_of, model_for, sse

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_weather",
            "description": "Weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
                "required": ["city", "date"],
            },
        },
    }
]
REQ = ModelRequest(
    [{"role": "system", "content": "s"}, {"role": "user", "content": "周五北京天气？"}],
    TOOLS,
    {"parallel_tool_calls": False},
)


async def test_whole_reply_and_what_was_sent():
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        call = {
            "id": "c1",
            "type": "function",
            "function": {
                "name": "search_weather",
                "arguments": '{"city": "北京", "date": "2025-01-10"}',
            },
        }
        return httpx.Response(
            200,
            json=completion(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call],
                    "function_call": None,
                    "refusal": None,
                    "annotations": [],
                },
                "tool_calls",
            ),
            headers={"x-request-id": "r1"},
        )

    model = model_for(
        handler,
        params={"temperature": 0, "seed": 7, "max_tokens": 64, "tool_choice": "auto"},
        headers={"X-Extra": "yes"},
    )
    response = await model.complete(REQ)
    body = json_of(seen[0])
    assert seen[0].url == "https://api.example.test/v1/chat/completions"
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert seen[0].headers["x-extra"] == "yes"
    assert body["model"] == "gpt-test" and body["tools"] == TOOLS
    assert body["messages"] == REQ.messages
    assert {
        k: body[k]
        for k in ("temperature", "seed", "max_tokens", "tool_choice", "parallel_tool_calls")
    } == {
        "temperature": 0,
        "seed": 7,
        "max_tokens": 64,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
    }
    assert "stream" not in body
    call = response.message.calls[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)["city"]) == (
        "c1",
        "search_weather",
        "北京",
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage == an.models.Usage(7, 3, 10)
    # legacy/unknown fields are not carried into the transcript
    assert set(response.message.model_dump(exclude_none=True)) <= {"role", "tool_calls"}


async def test_request_params_win_over_model_params():
    seen = []

    def handler(request):
        seen.append(json_of(request))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    model = model_for(handler, params={"temperature": 1.0})
    await model.complete(ModelRequest([{"role": "user", "content": "x"}], [], {"temperature": 0.2}))
    assert seen[0]["temperature"] == 0.2


async def test_tool_fields_are_dropped_when_there_are_no_tools():
    seen = []

    def handler(request):
        seen.append(json_of(request))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    model = model_for(handler, params={"tool_choice": "auto", "parallel_tool_calls": True})
    await model.complete(ModelRequest([{"role": "user", "content": "x"}]))
    assert "tool_choice" not in seen[0] and "parallel_tool_calls" not in seen[0]


async def test_arguments_given_as_an_object_are_serialised_and_reported():
    def handler(request):
        call = {"id": "c1", "function": {"name": "search_weather", "arguments": {"city": "北京"}}}
        return httpx.Response(
            200, json=completion({"role": "assistant", "tool_calls": [call]}, "tool_calls")
        )

    response = await model_for(handler).complete(REQ)
    assert json.loads(response.message.calls[0].function.arguments) == {"city": "北京"}
    assert "serialised" in response.repairs[0]


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("{not json", "invalid JSON"),
        ({"error": {"message": "model overloaded"}}, "model overloaded"),
        ({"id": "x"}, "no choices"),
    ],
)
async def test_unusable_bodies_raise_readable_errors(body, match):
    def handler(request):
        if isinstance(body, str):
            return httpx.Response(200, text=body)
        return httpx.Response(200, json=body)

    with pytest.raises(ModelResponseError, match=match):
        await model_for(handler).complete(REQ)


def test_the_key_never_shows_and_configuration_errors_are_clear(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match=r"needs an API key.*OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini")
    with pytest.raises(ConfigurationError, match="unknown model profile 'nope'"):
        OpenAIModel("m", base_url="http://x/v1", profile="nope")
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    with pytest.raises(ConfigurationError, match="needs a model name"):
        OpenAIModel(base_url="http://x/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = OpenAIModel("gpt-4o-mini")
    assert model.profile.name == "openai"
    for text in (repr(model), str(vars(model)), repr(model.__dict__)):
        assert KEY not in text


def test_the_openai_key_is_not_sent_to_other_hosts(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1")
    assert model._auth_headers() == {}


def test_profiles_are_detected_from_the_url_and_the_listing():
    assert detect_profile("https://api.openai.com/v1").name == "openai"
    assert detect_profile("https://x.openai.azure.com/openai/deployments/d").name == "azure"
    assert detect_profile("https://api.deepseek.com/v1").name == "deepseek"
    assert detect_profile("http://localhost:11434/v1").name == "ollama"
    listing = {"data": [{"id": "smollm2", "owned_by": "me"}]}
    assert detect_profile("http://127.0.0.1:8000/v1", listing).name == "llama-cpp-python"
    assert detect_profile("http://127.0.0.1:8000/v1").name == "generic"


async def test_auto_profile_asks_a_loopback_server_once():
    paths = []

    def handler(request):
        paths.append(request.url.path)
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": [{"id": "smollm2", "owned_by": "me"}]})
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    model = model_for(handler, profile="auto", base_url="http://127.0.0.1:8000/v1", api_key=None)
    await model.complete(REQ)
    await model.complete(REQ)
    assert paths == ["/v1/models", "/v1/chat/completions", "/v1/chat/completions"]
    assert model.profile.name == "llama-cpp-python"


async def test_azure_sends_the_key_in_api_key_and_the_version_in_the_query():
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    model = model_for(
        handler,
        profile="azure",
        base_url="https://r.openai.azure.com/openai/deployments/d",
        query={"api-version": "2024-10-21"},
    )
    await model.complete(REQ)
    assert seen[0].headers["api-key"] == KEY and "authorization" not in seen[0].headers
    assert seen[0].url.params["api-version"] == "2024-10-21"


# -- llama-cpp-python quirks -------------------------------------------------------------

HISTORY = ModelRequest(
    [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search_weather", "arguments": "{}"},
                }
            ],
            "reasoning_content": "hmm",
        },
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "search_weather", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "{}"},
    ],
    TOOLS,
    {"tool_choice": "required"},
)


async def test_llama_cpp_profile_reshapes_requests():
    seen = []

    def handler(request):
        seen.append(json_of(request))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    response = await model_for(handler, profile="llama-cpp-python").complete(HISTORY)
    system, *sent = seen[0]["messages"]
    assert system == {"role": "system", "content": ""}
    assert sent[1]["content"] == "" and sent[3]["content"] == ""
    assert "reasoning_content" not in sent[1]
    assert seen[0]["tool_choice"] == "auto"
    assert any("tool_choice 'required'" in r for r in response.repairs)
    assert HISTORY.messages[1]["content"] is None, "the session's wire dicts are untouched"


async def test_llama_cpp_profile_streams_with_tools_unstreamed():
    seen = []

    def handler(request):
        seen.append(json_of(request))
        call = {
            "id": "call__0_search_weather_x",
            "type": "function",
            "function": {
                "name": "search_weather",
                "arguments": '{"city": "Beijing", "date": "2025-01-10"}',
            },
        }
        return httpx.Response(
            200,
            json=completion(
                {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
            ),
        )

    model = model_for(handler, profile="llama-cpp-python", stream=True)
    deltas = [d async for d in model.stream(REQ)]
    assert "stream" not in seen[0] and "stream_options" not in seen[0]
    assert deltas[0].raw is not None and json.loads(deltas[0].raw)["choices"]
    assembler = ReplyAssembler()
    for d in deltas:
        assembler.add(d)
    reply = assembler.result()
    assert reply.message.calls[0].function.name == "search_weather"
    assert json.loads(reply.message.calls[0].function.arguments)["city"] == "Beijing"


async def test_llama_cpp_profile_streams_plain_text_and_sends_no_stream_options():
    seen = []

    def handler(request):
        seen.append(json_of(request))
        chunks = [{"choices": [{"delta": {"content": p}}]} for p in ("Hel", "lo")]
        chunks.append({"choices": [{"delta": {}, "finish_reason": "stop"}]})
        return httpx.Response(200, content=sse(*chunks))

    model = model_for(handler, profile="llama-cpp-python", stream=True)
    text = "".join(
        [d.text async for d in model.stream(ModelRequest([{"role": "user", "content": "hi"}]))]
    )
    assert text == "Hello" and seen[0]["stream"] is True and "stream_options" not in seen[0]


def test_profiles_can_be_customised():
    mine = PROFILES["generic"].with_options(text_actions=True, name="mine")
    assert isinstance(mine, Profile) and mine.text_actions and mine.name == "mine"


async def test_llama_cpp_profile_sends_tool_choice_auto_when_none_is_given():
    seen = []

    def handler(request):
        seen.append(json_of(request))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    response = await model_for(handler, profile="llama-cpp-python").complete(REQ)
    assert seen[0]["tool_choice"] == "auto" and response.repairs == ()
    await model_for(handler, profile="openai").complete(REQ)
    assert "tool_choice" not in seen[1]


async def test_the_key_never_reaches_events_traces_or_the_saved_session(tmp_path):
    def handler(request):
        assert request.headers["authorization"] == f"Bearer {KEY}"
        body = json_of(request)
        arguments = '{"city": "北京", "date": "2025-01-10"}'
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "search_weather", "arguments": arguments},
        }
        if body["messages"][-1]["role"] == "tool":
            message, finish = {"role": "assistant", "content": "晴"}, "stop"
        else:
            message, finish = {"role": "assistant", "tool_calls": [call]}, "tool_calls"
        if not body.get("stream"):
            return httpx.Response(200, json=completion(message, finish))
        delta = {k: v for k, v in message.items() if k != "role"}
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": 0, **call}]
        return httpx.Response(
            200, content=sse({"choices": [{"delta": delta, "finish_reason": finish}]})
        )

    for stream in (False, True):
        model = model_for(handler, stream=stream)
        session = an.Session()
        result = await an.travel.travel_agent(model=model).run("周五北京天气？", session=session)
        assert result.stop_reason == "final_answer"
        texts = [
            result.trace.to_jsonl(),
            json.dumps(session.to_openai(), ensure_ascii=False),
            "".join(repr(e) for e in result.events),
            repr(result),
            repr(session),
            str(result.trace.save(tmp_path / "run.jsonl").read_text(encoding="utf-8")),
        ]
        assert all(KEY not in text for text in texts)


async def test_llama_cpp_profile_adds_a_system_message_so_tools_are_listed():
    seen = []

    def handler(request):
        seen.append(json_of(request))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    bare = ModelRequest([{"role": "user", "content": "q"}], TOOLS)
    await model_for(handler, profile="llama-cpp-python").complete(bare)
    assert seen[0]["messages"][0] == {"role": "system", "content": ""}
    assert bare.messages[0]["role"] == "user"
    await model_for(handler, profile="llama-cpp-python").complete(REQ)
    assert [m["role"] for m in seen[1]["messages"]] == ["system", "user"]
