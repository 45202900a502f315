"""Apps written with real SDKs, each a travel tool loop on its own API: the openai SDK on Chat
Completions and on the Responses API (whole, streamed, chained by previous_response_id),
the openai-agents SDK on its default (Responses) model, the anthropic SDK (whole and
streamed). Each runs against a base URL (the proxy, or the upstream directly) and returns
what it sent and received, so a test can compare the proxy's sessions with it.

A ``Tap`` transport keeps every body the app received, byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

import agentnb as an
from tests.observe.observe_helpers import KEY

TRAVEL = an.travel.travel_agent(language="en")
QUESTION = "I fly from Shanghai to Beijing on Friday: find me a flight and the weather."


def _tap_class(http: Any) -> type:
    """A transport class for the HTTP library ``http`` (httpx, or httpx2 for the anthropic
    SDK, which refuses httpx objects)."""

    class Tap(http.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        """The app's HTTP transport, keeping each response body as it arrived."""

        def __init__(self) -> None:
            self.inner = http.AsyncHTTPTransport()
            self.bodies: list[bytes] = []
            self.paths: list[str] = []

        async def handle_async_request(self, request: Any) -> Any:
            response = await self.inner.handle_async_request(request)
            body = b"".join([part async for part in response.stream])
            await response.aclose()
            self.bodies.append(body)
            self.paths.append(request.url.path)
            headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
            return http.Response(response.status_code, headers=headers, content=body)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Tap


Tap = _tap_class(httpx)


@dataclass
class Run:
    """What an app did: the texts it ended with and the bodies it received."""

    answer: str
    tap: Any
    extra: dict[str, Any] = field(default_factory=dict)


async def _tool(name: str, arguments: str | dict[str, Any]) -> str:
    tool = TRAVEL.tools[name]
    args = json.loads(arguments) if isinstance(arguments, str) else arguments
    try:
        result = await tool(**tool.validate(args))
    except Exception as exc:  # the app's own error handling
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return json.dumps(result, ensure_ascii=False)


def _responses_tools() -> list[dict[str, Any]]:
    return [{"type": "function", **t["function"]} for t in TRAVEL.tools.schemas()]


def _anthropic_tools() -> list[dict[str, Any]]:
    return [
        {"name": f["name"], "description": f["description"], "input_schema": f["parameters"]}
        for f in (t["function"] for t in TRAVEL.tools.schemas())
    ]


async def chat(base_url: str, url: str, stream: bool = False) -> Run:
    import openai

    tap = Tap()
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key=KEY, max_retries=0, http_client=httpx.AsyncClient(transport=tap)
    )
    messages: list[dict[str, Any]] = [TRAVEL.system_wire(), {"role": "user", "content": QUESTION}]
    for _ in range(6):
        if stream:
            text, calls = "", {}
            async for chunk in await client.chat.completions.create(
                model="travel", messages=messages, tools=TRAVEL.tools.schemas(), stream=True
            ):
                delta = chunk.choices[0].delta if chunk.choices else None
                if delta is None:
                    continue
                text += delta.content or ""
                for c in delta.tool_calls or ():
                    slot = calls.setdefault(
                        c.index,
                        {"id": c.id, "type": "function", "function": {"name": "", "arguments": ""}},
                    )
                    slot["function"]["name"] = c.function.name or slot["function"]["name"]
                    slot["function"]["arguments"] += c.function.arguments or ""
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = list(calls.values())
        else:
            reply = await client.chat.completions.create(
                model="travel", messages=messages, tools=TRAVEL.tools.schemas()
            )
            message = reply.choices[0].message.model_dump(exclude_none=True)
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            content = await _tool(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    await client.close()
    return Run(messages[-1]["content"], tap, {"messages": messages})


async def responses(base_url: str, url: str, stream: bool = False, chain: bool = False) -> Run:
    """The Responses API by hand: the whole input each time, or ``chain``: only the new items
    after ``previous_response_id``."""
    import openai

    tap = Tap()
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key=KEY, max_retries=0, http_client=httpx.AsyncClient(transport=tap)
    )
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    new: list[Any] = list(items)
    previous = None
    text = ""
    for _ in range(6):
        options: dict[str, Any] = {
            "model": "travel",
            "instructions": TRAVEL.instructions,
            "tools": _responses_tools(),
        }
        if chain:
            options.update(input=new, previous_response_id=previous)
        else:
            options.update(input=items, store=False)
        if stream:
            async with client.responses.stream(**options) as events:
                async for _event in events:
                    pass
                response = await events.get_final_response()
        else:
            response = await client.responses.create(**options)
        output = [item.model_dump(exclude_none=True) for item in response.output]
        items += output
        previous = response.id
        calls = [o for o in output if o["type"] == "function_call"]
        text = response.output_text
        if not calls:
            break
        new = [
            {
                "type": "function_call_output",
                "call_id": c["call_id"],
                "output": await _tool(c["name"], c["arguments"]),
            }
            for c in calls
        ]
        items += new
    await client.close()
    return Run(text, tap, {"items": items})


async def anthropic_app(base_url: str, url: str, stream: bool = False) -> Run:
    import anthropic
    import httpx2

    tap = _tap_class(httpx2)()
    client = anthropic.AsyncAnthropic(
        base_url=url, api_key=KEY, max_retries=0, http_client=httpx2.AsyncClient(transport=tap)
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    text = ""
    for _ in range(6):
        options = {
            "model": "claude-travel",
            "max_tokens": 1024,
            "system": TRAVEL.instructions,
            "messages": messages,
            "tools": _anthropic_tools(),
        }
        if stream:
            async with client.messages.stream(**options) as events:
                async for _event in events:
                    pass
                reply = await events.get_final_message()
        else:
            reply = await client.messages.create(**options)
        content = [block.model_dump(exclude_none=True) for block in reply.content]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        text = "".join(b.get("text", "") for b in content if b["type"] == "text")
        if not uses:
            break
        results = [
            {
                "type": "tool_result",
                "tool_use_id": u["id"],
                "content": await _tool(u["name"], u["input"]),
            }
            for u in uses
        ]
        messages.append({"role": "user", "content": results})
    await client.close()
    return Run(text, tap, {"messages": messages})


async def agents_app(base_url: str, url: str, stream: bool = False) -> Run:
    """openai-agents on its default model: the Responses API."""
    import openai
    from agents import Agent, FunctionTool, Runner, set_default_openai_client, set_tracing_disabled

    set_tracing_disabled(True)  # the SDK would export its traces to OpenAI
    tap = Tap()
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key=KEY, max_retries=0, http_client=httpx.AsyncClient(transport=tap)
    )
    set_default_openai_client(client, use_for_tracing=False)

    def tool(schema: dict[str, Any]) -> FunctionTool:
        async def invoke(_context: Any, arguments: str, name: str = schema["name"]) -> str:
            return await _tool(name, arguments)

        return FunctionTool(
            name=schema["name"],
            description=schema["description"],
            params_json_schema=schema["parameters"],
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    agent = Agent(
        name="travel",
        instructions=TRAVEL.instructions,
        tools=[tool(t["function"]) for t in TRAVEL.tools.schemas()],
    )
    if stream:
        result = Runner.run_streamed(agent, QUESTION)
        async for _event in result.stream_events():
            pass
    else:
        result = await Runner.run(agent, QUESTION)
    await client.close()
    return Run(str(result.final_output), tap)


#: name -> (app, options): every app of the tier.
APPS = {
    "openai-chat": (chat, {}),
    "openai-chat-stream": (chat, {"stream": True}),
    "openai-responses": (responses, {}),
    "openai-responses-stream": (responses, {"stream": True}),
    "openai-responses-chained": (responses, {"chain": True}),
    "openai-responses-chained-stream": (responses, {"chain": True, "stream": True}),
    "anthropic": (anthropic_app, {}),
    "anthropic-stream": (anthropic_app, {"stream": True}),
    "openai-agents": (agents_app, {}),
    "openai-agents-stream": (agents_app, {"stream": True}),
}
