"""an.observe.serve: any agentnb model as an OpenAI-compatible endpoint (whole and streamed)."""

from __future__ import annotations

import openai

import agentnb as an

QUESTION = "我周五从上海去北京出差，帮我看看航班和天气"


def test_the_stand_in_answers_the_openai_sdk_whole_and_streamed():
    travel = an.travel.travel_agent()
    messages = [travel.system_wire(), {"role": "user", "content": QUESTION}]
    with an.observe.serve() as upstream, openai.OpenAI(base_url=upstream.base_url,
                                                       api_key="x") as app:  # fmt: skip
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
