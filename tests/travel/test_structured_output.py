"""The travel assistant with an itinerary output_type: in process, and through OpenAIModel
against the stand-in's server (response_format sent, passed through, honoured); format drift
on purpose, corrected within the retry limit and reported (002 §5.3)."""

from __future__ import annotations

import json

import httpx
import pytest
from pydantic import TypeAdapter

import agentnb as an
from agentnb.travel import Itinerary, TravelModel

openai_types = pytest.importorskip("openai.types.chat.completion_create_params")

REQUEST = an.travel.ARTICLE_REQUESTS["000"]
EXPECTED = Itinerary.model_validate({
    "origin": "上海", "destination": "北京", "date": "2025-01-10",
    "flight": {"flight_no": "MU5101", "airline": "中国东方航空", "departure_time": "08:00",
               "arrival_time": "10:15", "price": 880},
    "hotel": {"name": "全季酒店(北京国贸店)", "price_per_night": 520, "nights": 1},
    "total": 1400, "within_budget": True, "currency": "CNY",
})  # fmt: skip


async def test_in_process_the_itinerary_is_the_value():
    agent = an.travel.travel_agent(output_type=Itinerary)
    result = await agent.run(REQUEST)
    assert result.stop_reason == "final_answer" and result.value == EXPECTED
    assert json.loads(result.output) == EXPECTED.model_dump()
    prose = await an.travel.travel_agent().run(REQUEST)  # the same calls as without a format
    assert [c.function.name for c in result.tool_calls] == [
        c.function.name for c in prose.tool_calls]  # fmt: skip


async def test_format_drift_is_corrected_within_the_limit_and_reported():
    agent = an.travel.travel_agent(model=TravelModel(misbehave="format_drift"),
                                   output_type=Itinerary)  # fmt: skip
    session = an.Session()
    result = await agent.run(REQUEST, session=session)
    assert result.stop_reason == "final_answer" and result.value == EXPECTED
    checks = [e.output for e in result.events if e.type == "Decided" and e.output]
    assert [(c["attempt"], c["valid"]) for c in checks] == [(1, False), (2, True)]
    assert "date: String should match pattern" in checks[0]["error"]
    assert "total: Input should be a valid integer" in checks[0]["error"]
    drifted = json.loads(session.messages[-3].text)
    assert drifted["date"] == "周五" and drifted["total"] == "1400 元"
    assert session.messages[-2].name == "agentnb"
    assert [r.passed for r in [await _judge(an.checks.output_valid(), result)]] == [True]


async def test_json_mode_alone_lets_the_drift_through():
    agent = an.travel.travel_agent(
        model=TravelModel(misbehave="format_drift"),
        model_params={"response_format": {"type": "json_object"}},
    )
    result = await agent.run(REQUEST)
    assert json.loads(result.output)["total"] == "1400 元"  # JSON, but not the schema
    judged = await _judge(an.checks.output_valid(Itinerary), result)
    assert not judged.passed and "'1400 元' is not of type 'integer'" in judged.reason


async def _judge(check, result):
    from agentnb.evals.checks.base import Evidence, run_check

    return await run_check(check, Evidence(result))


def _sent(bodies: list[dict]) -> httpx.AsyncBaseTransport:
    """A transport that records each request body and passes it to the real server."""

    class Spy(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith("/chat/completions"):
                bodies.append(json.loads(request.content))
            return await super().handle_async_request(request)

    return Spy()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("misbehave", [None, "format_drift"])
async def test_through_openai_model_against_the_stand_ins_server(stream, misbehave):
    bodies: list[dict] = []
    params = TypeAdapter(openai_types.CompletionCreateParamsNonStreaming)
    with an.observe.serve(TravelModel(misbehave=misbehave)) as server:
        model = an.models.OpenAIModel("travel", base_url=server.base_url, api_key="sk-test",
                                      stream=stream, transport=_sent(bodies))  # fmt: skip
        agent = an.travel.travel_agent(model=model, output_type=Itinerary)
        result = await agent.run(REQUEST)
    assert result.stop_reason == "final_answer" and result.value == EXPECTED
    assert len(bodies) == result.iterations
    for body in bodies:
        assert body["response_format"] == agent.output.spec.chat()
        params.validate_python(
            {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        )
    checks = [e.output["valid"] for e in result.events if e.type == "Decided" and e.output]
    assert checks == ([False, True] if misbehave else [True])


def test_the_request_body_is_the_sdks_request_type():
    spec = an.models.OutputType(Itinerary).spec
    body = an.models.ModelRequest([{"role": "user", "content": "hi"}], output=spec).to_openai()
    checked = TypeAdapter(openai_types.CompletionCreateParamsNonStreaming).validate_python(
        {"model": "m", **body}
    )
    assert checked["response_format"]["json_schema"]["strict"] is True


class _Spy(httpx.AsyncHTTPTransport):
    """The real transport, keeping each request body it sent."""

    def __init__(self, bodies: list[dict]) -> None:
        super().__init__()
        self.bodies = bodies

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return await super().handle_async_request(request)


NATIVE = {
    "chat": an.models.OpenAIModel,
    "responses": an.models.ResponsesModel,
    "responses-stored": lambda *a, **kw: an.models.ResponsesModel(
        *a, conversation="previous_response_id", **kw
    ),
    "anthropic": an.models.AnthropicModel,
}


def _sent_as(api: str, body: dict, spec: an.models.OutputSpec, stream: bool) -> None:
    """The output spec as ``api`` takes it, and the body of the SDK's own request type."""
    from anthropic.types import message_create_params as anthropic_params
    from openai.types.responses import response_create_params as responses_params

    from tests.models.sdk_types import problems

    if api == "chat":
        assert body["response_format"] == spec.chat()
        return
    if api.startswith("responses"):
        assert body["text"] == {"format": spec.responses()}
        kind = (responses_params.ResponseCreateParamsStreaming if stream
                else responses_params.ResponseCreateParamsNonStreaming)  # fmt: skip
    else:
        tool, forced = spec.anthropic_tool()
        assert body["tools"][-1] == tool  # the answer tool, beside the agent's
        assert body["tool_choice"] == (forced if len(body["tools"]) == 1 else {"type": "any"})
        kind = (anthropic_params.MessageCreateParamsStreaming if stream
                else anthropic_params.MessageCreateParamsNonStreaming)  # fmt: skip
    assert problems(body, kind) == []


@pytest.mark.parametrize("misbehave", [None, "format_drift"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", list(NATIVE))
async def test_the_itinerary_through_every_api_against_the_stand_ins_server(api, stream, misbehave):
    bodies: list[dict] = []
    session = an.Session()
    with an.observe.serve(TravelModel(misbehave=misbehave)) as server:
        model = NATIVE[api]("travel", base_url=server.base_url, api_key="sk-test",
                            stream=stream, transport=_Spy(bodies))  # fmt: skip
        agent = an.travel.travel_agent(model=model, output_type=Itinerary)
        result = await agent.run(REQUEST, session=session)
    assert result.stop_reason == "final_answer" and result.value == EXPECTED
    assert json.loads(result.output) == EXPECTED.model_dump()
    spec = agent.output.spec
    assert len(bodies) == result.iterations
    for body in bodies:
        _sent_as(api, body, spec, stream)
    # the answer tool is read back as the final text: never a call the runtime would run
    names = [c.function.name for m in session.messages if m.role == "assistant" for c in m.calls]
    assert spec.name not in names and names == ["search_flights", "search_weather",
                                                "search_hotels", "calculate_cost"]  # fmt: skip
    checks = [e.output for e in result.events if e.type == "Decided" and e.output]
    assert [(c["attempt"], c["valid"]) for c in checks] == (
        [(1, False), (2, True)] if misbehave else [(1, True)])  # fmt: skip
    if api == "responses-stored":  # the server holds the rest: the correction is a new item
        assert all(b.get("previous_response_id") for b in bodies[1:])
        assert not any("previous_response_id not used" in p for e in result.events
                       if e.type == "Decided" for p in e.problems)  # fmt: skip
    if misbehave:  # corrected within the limit and reported
        assert checks[0]["attempts"] == 3 and "date: String should match" in checks[0]["error"]
        assert any("invalid final answer (attempt 1 of 3)" in p
                   for e in result.events if e.type == "Decided" for p in e.problems)  # fmt: skip
