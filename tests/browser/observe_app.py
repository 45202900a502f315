"""An app written with the plain openai SDK, run in its own process by test_observe.py.

python observe_app.py BASE_URL        two travel conversations, tools run by the app
"""

from __future__ import annotations

import json
import sys

import openai

import agentnb as an

QUESTIONS = [
    "I fly from Shanghai to Beijing on Friday: find me a flight and the weather.",
    "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。",
]


async def _call(tool, arguments):
    return await tool(**tool.validate(arguments))


def conversation(client: openai.OpenAI, question: str) -> list[dict]:
    import asyncio

    travel = an.travel.travel_agent(language="en")  # its instructions, schemas and tools
    messages = [travel.system_wire(), {"role": "user", "content": question}]
    for _ in range(6):
        reply = client.chat.completions.create(
            model="travel", messages=messages, tools=travel.tools.schemas()
        )
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return messages
        for call in message.tool_calls:
            tool = travel.tools[call.function.name]
            result = asyncio.run(_call(tool, json.loads(call.function.arguments)))
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(result, ensure_ascii=False)})  # fmt: skip
    return messages


def main(base_url: str) -> int:
    with openai.OpenAI(base_url=base_url, api_key="sk-browser-test-key") as client:
        sizes = [len(conversation(client, q)) for q in QUESTIONS]
    print("done", *sizes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
