"""an.observe.serve: any agentnb model as an OpenAI-compatible endpoint (whole and streamed)."""

from __future__ import annotations

import httpx
import openai

import agentnb as an

QUESTION = "我周五从上海去北京出差，帮我看看航班和天气"


def test_the_stand_in_answers_the_openai_sdk_whole_and_streamed():
    travel = an.travel.travel_agent()
    messages = [travel.system_wire(), {"role": "user", "content": QUESTION}]
    with (
        an.observe.serve() as upstream,
        openai.OpenAI(base_url=upstream.base_url, api_key="x") as app,
    ):
        whole = app.chat.completions.create(
            model="travel", messages=messages, tools=travel.tools.schemas()
        )
        calls = whole.choices[0].message.tool_calls
        assert whole.choices[0].finish_reason == "tool_calls" and calls
        assert {c.function.name for c in calls} <= set(travel.tools.names)
        stream = app.chat.completions.create(
            model="travel", messages=messages, tools=travel.tools.schemas(), stream=True
        )
        streamed: dict[int, dict] = {}
        for chunk in stream:
            for c in chunk.choices[0].delta.tool_calls or ():
                slot = streamed.setdefault(c.index, {"id": c.id, "name": "", "arguments": ""})
                slot["name"] = c.function.name or slot["name"]
                slot["arguments"] += c.function.arguments or ""
        assert [(s["id"], s["name"], s["arguments"]) for s in streamed.values()] == [
            (c.id, c.function.name, c.function.arguments) for c in calls
        ]
        assert [m.id for m in app.models.list().data] == [upstream.model.name]
        assert upstream.calls == 2


def test_a_stream_carries_usage_only_when_asked_and_its_reasoning():
    """Issue 30: the stand-in ignored stream_options.include_usage and dropped
    reasoning_content when streaming."""
    travel = an.travel.travel_agent()
    messages = [travel.system_wire(), {"role": "user", "content": QUESTION}]
    whole = an.travel.TravelModel()
    with (
        an.observe.serve(whole) as upstream,
        openai.OpenAI(base_url=upstream.base_url, api_key="x") as app,
    ):
        reply = app.chat.completions.create(
            model="travel", messages=messages, tools=travel.tools.schemas()
        )
        reasoning = reply.choices[0].message.model_extra.get("reasoning_content")
        assert reasoning  # the stand-in says what it understood
        assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
        for include in (True, False):
            options = {"stream_options": {"include_usage": True}} if include else {}
            chunks = list(
                app.chat.completions.create(
                    model="travel",
                    messages=messages,
                    tools=travel.tools.schemas(),
                    stream=True,
                    **options,
                )
            )
            usage = [c.usage for c in chunks if c.usage is not None]
            assert len(usage) == (1 if include else 0)
            if include:
                assert chunks[-1].choices == [] and usage[0].total_tokens > 0
            streamed = "".join(
                (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                for c in chunks
                if c.choices
            )
            assert streamed == reasoning


class Raises(an.models.Model):
    name = "raises"

    async def complete(self, request):
        raise KeyError("departure")


def test_a_model_that_raises_is_an_error_in_the_apps_format_not_a_bare_500():
    import anthropic

    with an.observe.serve(Raises()) as upstream:
        with openai.OpenAI(base_url=upstream.base_url, api_key="x", max_retries=0) as app:
            try:
                app.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
            except openai.InternalServerError as exc:
                assert exc.status_code == 500
                assert "KeyError" in exc.body["message"] and exc.body["type"] == "server_error"
            else:
                raise AssertionError("no error")
            try:
                app.responses.create(model="m", input="a")
            except openai.InternalServerError as exc:
                assert "KeyError" in exc.body["message"]
            else:
                raise AssertionError("no error")
        client = anthropic.Anthropic(base_url=upstream.url, api_key="x", max_retries=0)
        try:
            client.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "a"}]
            )
        except anthropic.InternalServerError as exc:
            assert exc.body["error"]["type"] == "api_error" and "KeyError" in str(exc)
        else:
            raise AssertionError("no error")
        assert len(upstream.errors) == 3
        bad = httpx.post(f"{upstream.base_url}/chat/completions", content=b"[1, 2")
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"


# -- 20 tool results an app may send that are not shaped like the travel tools' ---------------
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {
        "name": "search_flights",
        "arguments": '{"from_city": "上海", "to_city": "北京", "date": "周五"}',
    },
}
FOREIGN = [
    "plain text: two flights found",
    "",
    "null",
    "[]",
    "{}",
    '"a JSON string"',
    "42",
    "true",
    '{"ok": false, "error": "rate limited"}',
    '{"flights": "none today"}',
    '{"flights": [1, 2, 3]}',
    '{"flights": [{"number": "MU5101"}]}',
    '{"results": [{"flight": "CA1501", "price": "cheap"}]}',
    '{"data": {"items": [{"id": 1}]}}',
    '[{"departure": null, "arrival": null}]',
    '{"departure": {"time": "08:00"}}',
    "<html><body>500 Internal Server Error</body></html>",
    '{"flights": [{"departure": "08:00", "price": "n/a", "seats": -1}]}',
    '{"unicode": "\\u2028 line \\u0085 separators", "emoji": "✈️"}',
    '{"nested": ' * 30 + "1" + "}" * 30,
]


def _answers(model):
    travel = an.travel.travel_agent()
    with an.observe.serve(model) as upstream:
        answers = []
        for content in FOREIGN:
            messages = [
                travel.system_wire(),
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": None, "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "call_1", "content": content},
            ]
            answers.append(
                httpx.post(
                    f"{upstream.base_url}/chat/completions",
                    timeout=30,
                    json={"model": "travel", "messages": messages, "tools": travel.tools.schemas()},
                )
            )
        return answers, list(upstream.errors)


def test_twenty_foreign_tool_result_shapes_are_answered_never_with_a_bare_500():
    """Issue 30: serve(TravelModel()) answered a bare-text HTTP 500 (KeyError: 'departure')
    when an app's tool results were not shaped like the travel tools'. Whatever the model
    does with them, the app gets JSON its SDK reads: a reply, or an error in its format."""
    assert len(FOREIGN) == 20
    answers, _ = _answers(an.travel.TravelModel())
    for answer in answers:
        assert answer.headers["content-type"].startswith("application/json"), answer.text[:200]
        data = answer.json()
        if answer.status_code >= 500:
            assert data["error"]["type"] == "server_error" and data["error"]["message"]
        else:
            assert answer.status_code == 200 and data["choices"][0]["message"]


def test_the_stand_in_answers_twenty_foreign_tool_result_shapes_without_a_5xx():
    answers, errors = _answers(an.travel.TravelModel())
    assert [a.status_code for a in answers if a.status_code >= 500] == [], errors
