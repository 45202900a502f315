"""ResponsesModel and AnthropicModel against the stand-in's server: the travel assistant's
article request on every API, whole and streamed; reasoning kept and sent back exactly (the
server rejects it altered or missing, as the real APIs do); server-side state; a session
moved to another API; request bodies checked against the official SDKs' request types."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from anthropic.types import message_create_params as anthropic_params
from openai.types.responses import response_create_params as responses_params

import agentnb as an
from agentnb.errors import ModelHTTPError
from agentnb.models import WIRES, ModelRequest
from tests.models.sdk_types import problems

QUESTION = "周五上海到北京，帮我看看天气和机票"


class Sent(httpx.AsyncBaseTransport):
    """The real transport, keeping each request body it sent."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bodies: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(await request.aread()))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


MODELS = {
    "chat": lambda url, **kw: an.models.OpenAIModel("travel", base_url=url, **kw),
    "responses": lambda url, **kw: an.models.ResponsesModel("travel", base_url=url, **kw),
    "responses-stored": lambda url, **kw: an.models.ResponsesModel(
        "travel", base_url=url, conversation="previous_response_id", **kw
    ),
    "anthropic": lambda url, **kw: an.models.AnthropicModel("travel", base_url=url, **kw),
}
SDK_TYPES = {
    ("responses", False): responses_params.ResponseCreateParamsNonStreaming,
    ("responses", True): responses_params.ResponseCreateParamsStreaming,
    ("anthropic", False): anthropic_params.MessageCreateParamsNonStreaming,
    ("anthropic", True): anthropic_params.MessageCreateParamsStreaming,
}


def calls(session: an.Session) -> list[tuple[str, str]]:
    return [
        (c.function.name, c.function.arguments)
        for m in session.messages
        if m.role == "assistant"
        for c in m.calls
    ]


@pytest.fixture(scope="module")
def upstream():
    with an.observe.serve() as server:
        yield server


async def _chat_baseline(url: str) -> tuple[str, list[tuple[str, str]]]:
    session = an.Session()
    result = await an.travel.travel_agent(model=MODELS["chat"](url)).run(QUESTION, session=session)
    return result.output, calls(session)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", ["responses", "responses-stored", "anthropic"])
async def test_the_article_request_answers_the_same_on_every_api(upstream, api, stream):
    output, expected_calls = await _chat_baseline(upstream.base_url)
    sent = Sent()
    model = MODELS[api](upstream.base_url, stream=stream, transport=sent)
    session = an.Session()
    result = await an.travel.travel_agent(model=model).run(QUESTION, session=session)
    assert result.stop_reason == "final_answer"
    assert result.output == output and calls(session) == expected_calls
    replies = [m.to_openai() for m in session.messages if m.role == "assistant"]
    assert len(replies) >= 3 and all(r.get("reasoning_content") for r in replies)  # shown
    kept = [r["provider_data"] for r in replies]
    wire = "anthropic" if api == "anthropic" else "responses"
    assert all(k["api"] == wire and k["reasoning"] for k in kept)
    if api == "anthropic":  # signed thinking, sent back exactly with the tool results
        assert all(k["reasoning"][0]["signature"] for k in kept)
        for body, reply in zip(sent.bodies[1:], replies, strict=False):
            turns = [m for m in body["messages"] if m["role"] == "assistant"]
            assert turns[-1]["content"][0] == reply["provider_data"]["reasoning"][0]
    elif api == "responses":  # stateless: store false, encrypted reasoning sent back
        assert all(b["store"] is False for b in sent.bodies)
        assert all(k["reasoning"][0]["encrypted_content"] for k in kept)
        items = [i for i in sent.bodies[-1]["input"] if i.get("type") == "reasoning"]
        assert items == [k["reasoning"][0] for k in kept[:-1]]
    else:  # stored: only the new items, naming the reply they continue
        for body, before in zip(sent.bodies[1:], replies, strict=False):
            assert body["previous_response_id"] == before["provider_data"]["response_id"]
            assert [i.get("type") for i in body["input"]] == ["function_call_output"]
        held = replies[-1]["provider_data"]
        assert held["sent"] == 2 < held["held"] == len(session.messages)  # instructions + 5
    for body in sent.bodies:
        assert body.get("stream", False) is stream
        assert problems(body, SDK_TYPES[(wire, stream)]) == []


async def _one_turn(url: str, api: str) -> tuple[an.Session, Any]:
    """A session after the travel agent's first call (a tool call with signed reasoning)."""
    session = an.Session()
    agent = an.travel.travel_agent(model=MODELS[api](url))
    result = await agent.run(QUESTION, session=session)
    assert result.stop_reason == "final_answer"
    return session, agent


def _turns(session: an.Session, change) -> ModelRequest:
    """The session's messages up to the second reply, the first reply changed by ``change``."""
    wires = [m.to_openai() for m in session.messages]
    first = next(i for i, m in enumerate(wires) if m["role"] == "assistant")
    wires[first] = change(wires[first])
    second = next(i for i, m in enumerate(wires) if m["role"] == "assistant" and i > first)
    return ModelRequest(wires[:second])


def _altered_thinking(message: dict) -> dict:
    message["provider_data"]["reasoning"][0]["thinking"] += " (edited)"
    return message


def _altered_signature(message: dict) -> dict:
    block = message["provider_data"]["reasoning"][0]
    block["signature"] = block["signature"][::-1]
    return message


def _altered_encryption(message: dict) -> dict:
    item = message["provider_data"]["reasoning"][0]
    item["encrypted_content"] = item["encrypted_content"][:-4] + "AAAA"
    return message


def _dropped(message: dict) -> dict:
    message.pop("provider_data")
    return message


@pytest.mark.parametrize(
    ("api", "change", "error"),
    [
        ("anthropic", _altered_thinking, "Invalid `signature` in `thinking` block"),
        ("anthropic", _altered_signature, "Invalid `signature` in `thinking` block"),
        ("anthropic", _dropped, "Expected `thinking` or `redacted_thinking`"),
        ("responses", _altered_encryption, "could not be verified"),
        ("responses", _dropped, "without its required 'reasoning' item"),
    ],
)
async def test_reasoning_not_sent_back_exactly_is_rejected_like_the_real_api(
    upstream, api, change, error
):
    session, _ = await _one_turn(upstream.base_url, api)
    model = MODELS[api](upstream.base_url)
    untouched = _turns(session, lambda m: m)
    await model.complete(untouched)  # as it came: accepted
    with pytest.raises(ModelHTTPError) as info:
        await model.complete(_turns(session, change))
    assert info.value.status == 400 and error in str(info.value)


async def test_a_session_moved_to_another_api_says_what_was_dropped(upstream):
    session, agent = await _one_turn(upstream.base_url, "anthropic")
    moved = agent.copy(model=MODELS["responses"](upstream.base_url))
    result = await moved.run("那周六呢？", session=session)
    assert result.stop_reason == "final_answer"
    said = [p for e in result.events if type(e).__name__ == "Decided" for p in e.problems]
    assert said and "not written by the Responses API" in said[0]
    back = agent.copy(model=MODELS["anthropic"](upstream.base_url))
    result = await back.run("谢谢", session=session)
    said = [p for e in result.events if type(e).__name__ == "Decided" for p in e.problems]
    assert said and "not written by Anthropic" in said[0]


async def test_the_unsigned_stand_in_neither_signs_nor_checks():
    with an.observe.serve(signed=False) as server:
        session, _ = await _one_turn(server.base_url, "anthropic")
        thinking = [m.to_openai()["provider_data"]["reasoning"][0] for m in session.messages
                    if m.role == "assistant"]  # fmt: skip
        assert {b["signature"] for b in thinking} == {""}
        reply = await MODELS["anthropic"](server.base_url).complete(_turns(session, _dropped))
        assert reply.message.text or reply.message.calls


async def test_anthropic_model_sends_its_key_in_x_api_key_with_the_version(monkeypatch):
    seen: list[httpx.Headers] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(
            200,
            json={"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                  "usage": {"input_tokens": 3, "output_tokens": 1}},
        )  # fmt: skip

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    model = an.models.AnthropicModel("claude-x", transport=httpx.MockTransport(answer))
    assert model.profile.name == "anthropic" and model.url.endswith("/v1/messages")
    reply = await model.complete(ModelRequest([{"role": "user", "content": "hi"}]))
    assert reply.message.text == "ok"
    assert seen[0]["x-api-key"] == "sk-ant-test-0123456789" and "authorization" not in seen[0]
    assert seen[0]["anthropic-version"] == "2023-06-01"
    assert "sk-ant" not in repr(model) and "sk-ant" not in repr(vars(model))


async def test_prompt_caching_marks_the_instructions_and_the_tools(upstream):
    sent = Sent()
    model = MODELS["anthropic"](upstream.base_url, cache=True, transport=sent)
    await an.travel.travel_agent(model=model).run(QUESTION, session=an.Session())
    body = sent.bodies[0]
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert problems(body, SDK_TYPES[("anthropic", False)]) == []


@pytest.mark.parametrize("api", ["responses", "responses-stored", "anthropic"])
async def test_a_cassette_records_and_replays_a_native_model(upstream, api, tmp_path):
    from agentnb.models.replay import record, replay

    path = tmp_path / f"{api}.jsonl"
    model = record(MODELS[api](upstream.base_url), path)
    first = await an.travel.travel_agent(model=model).run(QUESTION, session=an.Session())
    again = replay(path)
    assert type(again) is type(model)
    second = await an.travel.travel_agent(model=again).run(QUESTION, session=an.Session())
    assert second.output == first.output


async def test_prompt_caching_usage_reaches_the_record_and_the_cost():
    from agentnb.evals.cost import PriceTable

    with an.observe.serve() as server:  # its prompt cache empty
        model = MODELS["anthropic"](server.base_url, cache=True)
        session = an.Session()
        result = await an.travel.travel_agent(model=model).run(QUESTION, session=session)
    calls = [e.usage for e in result.events if type(e).__name__ == "ModelResponded"]
    assert calls[0].cache_write_tokens > 0 and calls[0].cached_tokens == 0
    assert all(u.cached_tokens == calls[0].cache_write_tokens for u in calls[1:])
    record = session.runs[-1]
    assert record.usage.cached_tokens == sum(u.cached_tokens for u in calls)
    assert record.usage.cache_write_tokens == calls[0].cache_write_tokens
    prices = PriceTable()
    prices.set(model.name, input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    flat = PriceTable()
    flat.set(model.name, input=3.0, output=15.0)
    billed = record.billed
    assert prices.lookup(model.name).cost(  # type: ignore[union-attr]
        billed.prompt_tokens, billed.completion_tokens, billed.cached_tokens,
        billed.cache_write_tokens,
    ) < flat.lookup(model.name).cost(billed.prompt_tokens, billed.completion_tokens)  # type: ignore[union-attr]  # fmt: skip
    assert record.to_dict()["usage"]["cached_tokens"] == record.usage.cached_tokens


def test_openai_usage_details_are_read_on_every_api():
    from agentnb.models import Usage

    chat = Usage.from_openai(
        {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150,
         "prompt_tokens_details": {"cached_tokens": 64},
         "completion_tokens_details": {"reasoning_tokens": 32}}
    )  # fmt: skip
    assert (chat.cached_tokens, chat.reasoning_tokens) == (64, 32)
    reply = an.models.WIRES["responses"].read_reply(
        {"id": "r", "output": [], "status": "completed",
         "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 64},
                   "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 32},
                   "total_tokens": 150}}
    )  # fmt: skip
    assert reply.usage == chat
    claude = an.models.WIRES["anthropic"].read_reply(
        {"id": "m", "content": [], "stop_reason": "end_turn",
         "usage": {"input_tokens": 10, "cache_read_input_tokens": 64,
                   "cache_creation_input_tokens": 26, "output_tokens": 50}}
    )  # fmt: skip
    assert claude.usage is not None
    assert (claude.usage.prompt_tokens, claude.usage.cached_tokens) == (100, 64)
    assert claude.usage.cache_write_tokens == 26


async def test_a_session_moved_to_chat_completions_says_what_it_did_not_send(upstream):
    session, agent = await _one_turn(upstream.base_url, "anthropic")
    sent = Sent()
    moved = agent.copy(model=MODELS["chat"](upstream.base_url, transport=sent))
    result = await moved.run("那周六呢？", session=session)
    said = [p for e in result.events if type(e).__name__ == "Decided" for p in e.problems]
    assert said and "Chat Completions cannot take back" in said[0] and "of 3 assistant" in said[0]
    assert all("provider_data" not in m for b in sent.bodies for m in b["messages"])
    assert any("provider_data" in m for m in session.to_openai())  # the transcript keeps it


def test_a_json_schema_response_format_becomes_the_responses_text_format():
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
              "additionalProperties": False}  # fmt: skip
    fmt = {"type": "json_schema", "json_schema": {"name": "trip", "schema": schema, "strict": True}}
    body, _ = an.models.WIRES["responses"].write_request(
        "m", [{"role": "user", "content": "hi"}], [], {"response_format": fmt}, False
    )
    assert body["text"] == {"format": {"type": "json_schema", "name": "trip", "schema": schema,
                                       "strict": True}}  # fmt: skip
    assert problems(body, SDK_TYPES[("responses", False)]) == []


def _said(result) -> list[str]:
    return [p for e in result.events if type(e).__name__ == "Decided" for p in e.problems]


def _edited_first_result(session: an.Session) -> None:
    """The first tool result changed (a field added), as a learner edits it."""
    call = next(c.id for m in session.messages if m.role == "assistant" for c in m.calls)
    result = next(m for m in session.messages if m.role == "tool" and m.tool_call_id == call)
    session.edit_result(call, {**json.loads(result.text), "note": "edited"})


async def test_a_stored_conversation_edited_before_its_reply_is_sent_whole(upstream):
    """Never answered from the server's other context: the reply the transcript continues was
    stored before the edit, so the call sends the whole context (stateless for that call),
    says why, and the next call continues the reply that saw the edit."""
    sent = Sent()
    agent = an.travel.travel_agent(model=MODELS["responses-stored"](upstream.base_url,
                                                                    transport=sent))  # fmt: skip
    session = an.Session()
    await agent.run(QUESTION, session=session)
    before = len(session.messages)
    _edited_first_result(session)
    n = len(sent.bodies)
    result = await agent.run("那周六呢？", session=session)
    assert result.stop_reason == "final_answer"
    whole, then = sent.bodies[n], sent.bodies[n + 1]
    assert "previous_response_id" not in whole and len(whole["input"]) > before
    assert any('"note": "edited"' in str(i.get("output")) for i in whole["input"])
    said = _said(result)
    assert said and said[0].startswith("previous_response_id not used: the transcript up to ")
    assert "was edited since the server stored it" in said[0]
    reply = next(m for m in session.messages[before:] if m.role == "assistant")
    assert then["previous_response_id"] == reply.to_openai()["provider_data"]["response_id"]
    assert len(said) == 1  # said for the call that could not continue, not after


async def test_a_fork_continues_its_stored_reply_unless_edited_before_it(upstream):
    sent = Sent()
    agent = an.travel.travel_agent(model=MODELS["responses-stored"](upstream.base_url,
                                                                    transport=sent))  # fmt: skip
    session = an.Session()
    await agent.run(QUESTION, session=session)
    replies = [m.to_openai() for m in session.messages if m.role == "assistant"]
    fork = session.fork(call=2)  # what call 2 was asked with: the server holds it all
    n = len(sent.bodies)
    result = await agent.run(None, session=fork)
    assert result.stop_reason == "final_answer" and not _said(result)
    assert sent.bodies[n]["previous_response_id"] == replies[1]["provider_data"]["response_id"]
    edited = session.fork(call=2)
    _edited_first_result(edited)  # before the stored reply: the server holds the old result
    n = len(sent.bodies)
    result = await agent.run(None, session=edited)
    assert result.stop_reason == "final_answer"
    assert "previous_response_id" not in sent.bodies[n]
    assert "was edited since the server stored it" in _said(result)[0]


TOTAL = {"type": "object", "title": "Total", "properties": {"total": {"type": "integer"}},
         "required": ["total"], "additionalProperties": False}  # fmt: skip
SEARCH = {"type": "function", "function": {"name": "search", "description": "Search.",
          "parameters": {"type": "object", "properties": {}}}}  # fmt: skip


def _claude(content: list[dict], bodies: list[dict]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": content, "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 2}})  # fmt: skip

    return httpx.MockTransport(answer)


def _use(name: str, data: dict) -> dict:
    return {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": data}


async def test_anthropic_reads_the_answer_tool_back_as_the_final_text():
    spec = an.models.OutputType(TOTAL).spec
    asked = ModelRequest([{"role": "user", "content": "hi"}], [SEARCH], output=spec)
    bodies: list[dict] = []
    content = [{"type": "text", "text": "Here it is:"}, _use("Total", {"total": 3})]
    model = an.models.AnthropicModel("m", base_url="http://x/v1", api_key="k",
                                     transport=_claude(content, bodies))  # fmt: skip
    reply = await model.complete(asked)
    assert reply.message.text == '{"total": 3}' and not reply.message.calls
    assert reply.finish_reason == "stop"
    assert reply.repairs == ("the text written before the answer tool (11 chars) was not kept",)
    tool, forced = spec.anthropic_tool()
    assert bodies[0]["tools"][-1] == tool and bodies[0]["tool_choice"] == {"type": "any"}
    assert tool["description"].startswith(an.models.output.ANSWER_TOOL)
    assert problems(bodies[0], SDK_TYPES[("anthropic", False)]) == []
    # beside another call: that call runs, the answer's is not kept (and said)
    both = [_use("search", {}), _use("Total", {"total": 3})]
    model = an.models.AnthropicModel("m", base_url="http://x/v1", api_key="k",
                                     transport=_claude(both, bodies))  # fmt: skip
    reply = await model.complete(asked)
    assert [c.function.name for c in reply.message.calls] == ["search"]
    assert "was called beside other tools" in reply.repairs[0]
    # no other tool: the answer tool forced; extended thinking: offered, not forced (said)
    await model.complete(ModelRequest([{"role": "user", "content": "hi"}], output=spec))
    assert bodies[-1]["tool_choice"] == forced and bodies[-1]["tools"] == [tool]
    thinking = an.models.AnthropicModel("m", base_url="http://x/v1", api_key="k", thinking=1024,
                                        transport=_claude(content[1:], bodies))  # fmt: skip
    reply = await thinking.complete(asked)
    assert bodies[-1]["tool_choice"] == {"type": "auto"} and reply.message.text == '{"total": 3}'
    assert "extended thinking cannot force a tool" in reply.repairs[0]
    # read off the wire (the stand-in's server): the spec, and the agent's tools without it
    read = WIRES["anthropic"].read_request(bodies[0])
    found, others = an.models.OutputSpec.from_anthropic(read.tools, read.params["tool_choice"])
    assert found is not None and found.name == "Total" and found.schema == TOTAL
    assert [t["function"]["name"] for t in others] == ["search"]
    assert an.models.OutputSpec.from_anthropic([SEARCH], {"type": "any"}) == (None, [SEARCH])
