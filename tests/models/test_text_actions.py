"""Actions written as text: parsed into real calls, repaired from the schema, or corrected."""

from __future__ import annotations

import json

import httpx
import pytest

import agentnb as an
from agentnb.messages import AssistantMessage
from agentnb.models import ModelRequest, ModelResponse, ReplyAssembler
from agentnb.models.openai.text_actions import apply_text_actions, parse_text_actions
from tests.models.openai_helpers import completion, json_of, model_for, sse


def schema(name, props, required=None):
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": "string"} for p in props},
                "required": list(required if required is not None else props),
            },
        },
    }


TOOLS = [
    schema("search_weather", ["city", "date"]),
    schema("search_flights", ["departure", "destination", "date"]),
    schema("lookup_city", ["name"]),
]
W = {"city": "北京", "date": "2025-01-10"}


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "search_weather", "arguments": {"city": "北京", "date": "2025-01-10"}}</tool_call>',
        '<tool_call>[{"name": "search_weather", "arguments": {"city": "北京", "date": "2025-01-10"}}]</tool_call>',
        'Let me check.\n```json\n{"name": "search_weather", "parameters": {"city": "北京", "date": "2025-01-10"}}\n```',
        '{"function": {"name": "search_weather", "arguments": "{\\"city\\": \\"北京\\", \\"date\\": \\"2025-01-10\\"}"}}',
        '{"tool": "search_weather", "args": {"city": "北京", "date": "2025-01-10"}}',
        'search_weather(city="北京", date="2025-01-10")',
    ],
)
def test_each_written_form_becomes_the_same_call(text):
    action = parse_text_actions(text, TOOLS)
    assert action.error is None and action.calls == [("search_weather", W)]


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ('{"arguments": {"city": "北京", "date": "2025-01-10"}}', "missing tool name filled in"),
        ('{"city": "北京", "date": "2025-01-10"}', "missing tool name filled in"),
        (
            '{"name": "SearchWeather", "arguments": {"city": "北京", "date": "2025-01-10"}}',
            "read as 'search_weather'",
        ),
        ('{"name": "lookup-city", "arguments": "北京"}', "bare string became the argument 'name'"),
    ],
)
def test_rule_based_repairs_fill_what_the_schema_makes_unambiguous(text, note):
    action = parse_text_actions(text, TOOLS)
    assert action.error is None and len(action.calls) == 1
    assert any(note in n for n in action.notes), action.notes


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            '<tool_call>{"name": "search_weather", "arguments": {"city": </tool_call>',
            "could not be parsed",
        ),
        ('{"name": "book_hotel", "arguments": {}}', "no tool named 'book_hotel'"),
        ('{"arguments": {"date": "2025-01-10"}}', "names no tool"),
        ('{"name": "search_weather", "arguments": [1, 2]}', "must be a JSON object"),
        ('search_weather("北京")', "use key=value"),
    ],
)
def test_unparseable_actions_explain_why(text, reason):
    action = parse_text_actions(text, TOOLS)
    assert action.attempted and action.error and reason in action.error


@pytest.mark.parametrize("text", ["北京周五晴，-3 到 5 度。", "I used {braces} in prose.", ""])
def test_prose_is_left_alone(text):
    response = ModelResponse(AssistantMessage(content=text), finish_reason="stop")
    assert apply_text_actions(response, TOOLS) is response


def test_apply_makes_real_calls_with_stable_unique_ids_and_reports_the_repair():
    text = '<tool_call>{"name": "search_weather", "arguments": {"city": "北京", "date": "2025-01-10"}}</tool_call>'
    response = ModelResponse(AssistantMessage(content=text), finish_reason="stop")
    a = apply_text_actions(response, TOOLS, salt="3")
    b = apply_text_actions(response, TOOLS, salt="3")
    c = apply_text_actions(response, TOOLS, salt="5")
    call = a.message.calls[0]
    assert json.loads(call.function.arguments) == W and a.finish_reason == "tool_calls"
    assert call.id == b.message.calls[0].id != c.message.calls[0].id
    assert "written as text were turned into real calls: search_weather" in a.repairs[0]


def test_apply_turns_a_broken_action_into_a_correction():
    response = ModelResponse(AssistantMessage(content='{"name": "nope", "arguments": {}}'))
    fixed = apply_text_actions(response, TOOLS)
    assert fixed.message is response.message
    assert fixed.correction.startswith(
        "Your action was not valid because there is no tool named 'nope'"
    )
    assert "Answer again" in fixed.correction


# -- through the client ------------------------------------------------------------------

REQ = ModelRequest([{"role": "user", "content": "周五北京天气"}], TOOLS)
WRITTEN = (
    '```json\n{"name": "search_weather", "arguments": {"city": "北京", "date": "2025-01-10"}}\n```'
)


def handler(request):
    if json_of(request).get("stream"):
        pieces = [WRITTEN[i : i + 9] for i in range(0, len(WRITTEN), 9)]
        chunks = [{"choices": [{"delta": {"content": p}}]} for p in pieces]
        return httpx.Response(
            200, content=sse(*chunks, {"choices": [{"delta": {}, "finish_reason": "stop"}]})
        )
    return httpx.Response(200, json=completion({"role": "assistant", "content": WRITTEN}))


async def test_the_client_applies_text_actions_only_when_asked():
    off = await model_for(handler).complete(REQ)
    assert not off.message.tool_calls
    on = await model_for(handler, text_actions=True).complete(REQ)
    assert on.message.calls[0].function.name == "search_weather" and on.repairs
    no_tools = await model_for(handler, text_actions=True).complete(ModelRequest(REQ.messages))
    assert not no_tools.message.tool_calls


async def test_a_streamed_text_action_ends_with_the_real_call():
    model = model_for(handler, text_actions=True, stream=True)
    assembler = ReplyAssembler()
    async for delta in model.stream(REQ):
        assembler.add(delta)
    reply = assembler.result()
    assert reply.message.calls[0].function.name == "search_weather"
    assert json.loads(reply.message.calls[0].function.arguments) == W


async def test_an_agent_run_executes_a_call_written_as_text(tools):
    replies = iter(
        [
            '<tool_call>{"name": "search_weather", "arguments": {"city": "北京", "date": "2025-01-10"}}</tool_call>',
            '{"name": "book_hotel", "arguments": {}}',
            "北京周五晴。",
        ]
    )
    bodies = []

    def agent_handler(request):
        bodies.append(json_of(request))
        return httpx.Response(200, json=completion({"role": "assistant", "content": next(replies)}))

    model = model_for(agent_handler, text_actions=True)
    agent = an.Agent("You are a travel assistant.", tools, model=model, max_iterations=5)
    session = an.Session()
    result = await agent.run("周五北京天气？", session=session)
    assert result.stop_reason == "final_answer" and result.output == "北京周五晴。"
    assert session.is_valid and session.problems == []
    wire = session.to_openai()
    assert wire[1]["tool_calls"][0]["function"]["name"] == "search_weather"
    assert wire[2]["role"] == "tool" and "晴" in wire[2]["content"]
    decided = [e for e in result.events if type(e).__name__ == "Decided"]
    assert any("written as text" in p for p in decided[0].problems)
    # the correction for the invalid action reached the model
    assert "no tool named 'book_hotel'" in json.dumps(bodies[2]["messages"], ensure_ascii=False)


def test_a_call_inside_prose_is_found_but_plain_json_in_prose_is_not():
    text = 'Sure! {"name": "search_weather", "arguments": {"city": "北京", "date": "2025-01-10"}} Done.'
    assert parse_text_actions(text, TOOLS).calls == [("search_weather", W)]
    prose = 'Use this JSON: {"flight_id": 1, "city": "Beijing"} to book.'
    action = parse_text_actions(prose, TOOLS)
    assert not action.attempted and not action.calls


def test_the_chatml_function_calling_form_and_html_escapes():
    text = "functions.search_weather:\n{&#34;city&#34;: &#34;北京&#34;, &#34;date&#34;: &#34;2025-01-10&#34;}"
    action = parse_text_actions(text, TOOLS)
    assert action.calls == [("search_weather", W)]
    assert "HTML-escaped quotes were unescaped" in action.notes


def test_what_smollm2_really_wrote_gets_a_correction():
    # SmolLM2-135M's wrap-up reply in data/cassettes/travel_smollm2_tools.jsonl
    text = (
        "functions.search_flights:\n{ &#34;departure&#34;, &#34;date&#34;, &#34;destination&#34;}"
    )
    response = apply_text_actions(ModelResponse(AssistantMessage(content=text)), TOOLS)
    assert response.correction and "could not be parsed" in response.correction


async def test_finish_stream_gives_the_runtime_the_repairs_and_corrections_of_a_stream():
    model = model_for(handler, text_actions=True, stream=True)
    assembler = ReplyAssembler()
    async for delta in model.stream(REQ):
        assembler.add(delta)
    finished = model.finish_stream(assembler.result(), REQ)
    assert finished.finish_reason == "tool_calls"
    assert any("written as text" in r for r in finished.repairs)

    def broken(request):
        chunks = [{"choices": [{"delta": {"content": '{"name": "nope", "arguments": {}}'}}]}]
        return httpx.Response(
            200, content=sse(*chunks, {"choices": [{"delta": {}, "finish_reason": "stop"}]})
        )

    model = model_for(broken, text_actions=True, stream=True)
    assembler = ReplyAssembler()
    async for delta in model.stream(REQ):
        assembler.add(delta)
    finished = model.finish_stream(assembler.result(), REQ)
    assert not finished.message.tool_calls and "no tool named 'nope'" in finished.correction
