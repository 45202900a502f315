"""pydantic-ai itself through the recording proxy: its reasoning shapes stay two sessions
(optional; not a test). Issue 40 item 5.

    uv venv /work/venvs/pai                      # its own venv, outside the repo
    uv pip install --python /work/venvs/pai/bin/python \
        'pydantic-ai-slim[openai,anthropic]' -e '.[observe]'
    /work/venvs/pai/bin/python scripts/pydantic_ai_through_the_proxy.py [--api responses ...]
        [--signed yes|no|both] [--stream] [--travel] [--dump bodies.json]

The stand-in model server (``an.observe.serve``) answers with reasoning, signed (a reasoning
item with ``encrypted_content``, a thinking block with a signature, checked when they come
back) or unsigned (``signed=False``: what pydantic-ai cannot keep natively and re-sends as
text, ``<think>`` on the Responses API and an ``<assistant_thinking>`` user message on
Anthropic); the recording proxy (``an.observe.proxy``) sits in front of it, and pydantic-ai's
``Agent`` talks to the proxy with ``OpenAIResponsesModel``, ``AnthropicModel`` and
``OpenAIChatModel``, in the shape of a chat app (turn 4's harness): a first question, a
follow-up with the message history, then the follow-up edited (the same history, another last
user message). Each API runs with the provider's model name (pydantic-ai's profile for it
decides what reasoning it keeps: gpt-5's goes back as reasoning items) and with the
stand-in's (``travel``, as a compatible server's model is named: no profile, reasoning goes
back as text). The upstream model answers 'answer N' with reasoning 'thinking N'; with
``--travel`` it is the travel stand-in, and pydantic-ai gets the travel assistant's
instructions and four tools, so reasoning also has to come back across tool-use turns.

Counted: the proxy's sessions and how each came to be (``proxy.conversations``), as
tests/observe/test_splits.py counts them. Right: 2 sessions per run, ``new`` and ``branch``
(the edited follow-up branches after the first answer), the first session's texts the first
question, its answer, the follow-up and its answer (``--travel``: each session's user turns),
no problem in any session and no error. *rejected*: the signed stand-in refused a tool-use
turn whose reasoning pydantic-ai did not send back (with ``--travel``, on the Responses API
under a model name without an encrypted-reasoning profile: pydantic-ai drops the
``encrypted_content`` and re-sends the reasoning as ``<think>`` text, which the stand-in's
server refuses as it refuses any reasoning not sent back exactly; the client's doing, not the
proxy's). ``--dump`` writes the request
bodies pydantic-ai sent (what tests/observe/test_splits.py reproduces). Exit status 1 when a
run is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from importlib.metadata import version
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

import agentnb as an

APIS = ("responses", "anthropic", "chat")
INSTRUCTIONS = "你是旅行助手。"
FIRST, FOLLOW_UP, EDITED = "周五上海到北京？", "那周六呢？", "那周日呢？"
#: --travel: the travel stand-in's questions (it calls tools before it answers).
TRAVEL = ("我周五从上海去北京出差，帮我看看航班和天气", "那周六呢？", "那周日呢？")


def thinking_model() -> an.models.FunctionModel:
    """Answers 'answer N' with reasoning 'thinking N' (N: the user turns it reads), as
    tests/observe/test_splits.py's model."""

    def reply(request: Any) -> dict[str, Any]:
        n = sum(m.get("role") == "user" for m in request.messages)
        return {"role": "assistant", "content": f"answer {n}", "reasoning_content": f"thinking {n}"}

    return an.models.FunctionModel(reply)


#: The model name pydantic-ai is given per API: the provider's own (its profile says what the
#: model can keep: gpt-5's reasoning items go back as items), or the stand-in's, as a
#: compatible server's model would be named (no profile: unsigned reasoning goes back as text).
NAMES = {"responses": "gpt-5", "anthropic": "claude-sonnet-4-5", "chat": "gpt-4o"}
STANDIN = "travel"


def pydantic_ai_model(api: str, name: str, proxy: Any) -> Any:
    if api == "anthropic":  # the SDK adds /v1/messages itself
        return AnthropicModel(name, provider=AnthropicProvider(base_url=proxy.url, api_key="x"))
    provider = OpenAIProvider(base_url=proxy.base_url, api_key="x")
    if api == "responses":
        return OpenAIResponsesModel(name, provider=provider)
    return OpenAIChatModel(name, provider=provider)


async def ask(agent: Agent, prompt: str, history: Any, stream: bool) -> tuple[Any, str]:
    """The run's messages and its output."""
    if not stream:
        result = await agent.run(prompt, message_history=history)
        return result.all_messages(), str(result.output)
    async with agent.run_stream(prompt, message_history=history) as streamed:
        output = await streamed.get_output()
    return streamed.all_messages(), str(output)


def travel_agent(model: Any) -> Agent:
    """pydantic-ai's Agent with the travel assistant's instructions and its four tools (their
    agentnb schemas as given, the functions called as pydantic-ai calls them)."""
    travel = an.travel.travel_agent()
    tools = [
        Tool.from_schema(t.fn, t.name, t.description, t.schema["function"]["parameters"])
        for t in travel.tools
    ]
    return Agent(model, instructions=travel.instructions, tools=tools)


async def harness(api: str, name: str, signed: bool, stream: bool, travel: bool) -> dict[str, Any]:
    """The three requests of a chat app through the proxy; what the proxy made of them."""
    upstream_model = an.travel.TravelModel() if travel else thinking_model()
    questions = TRAVEL if travel else (FIRST, FOLLOW_UP, EDITED)
    with (
        an.observe.serve(upstream_model, signed=signed) as upstream,
        an.observe.proxy(upstream=upstream.base_url) as proxy,
    ):
        model = pydantic_ai_model(api, name, proxy)
        agent = travel_agent(model) if travel else Agent(model, instructions=INSTRUCTIONS)
        outputs, rejected = [], None
        try:
            history, first = await ask(agent, questions[0], None, stream)
            outputs.append(first)
            for question in questions[1:]:
                outputs.append((await ask(agent, question, history, stream))[1])
        except ModelAPIError as exc:  # the server refused what the client sent back
            rejected = f"{type(exc).__name__}: {exc}"
        sessions = proxy.sessions
        hows = [c.how for c in proxy.conversations]
        texts = [m.text for m in sessions[0].messages if m.role != "system"] if sessions else []
        users = [[m.text for m in s.messages if m.role == "user"] for s in sessions]
        problems = [str(p) for s in sessions for p in s.problems]
        bodies = [c.body for c in proxy.calls]
        errors = list(upstream.errors) + [
            f"{c.status} {c.response[:200]}" for c in proxy.calls if c.status != 200
        ]
    right = len(sessions) == 2 and hows == ["new", "branch"] and not errors and not problems
    right = right and rejected is None
    if travel:  # tool calls between: the user turns of each session
        right = right and users == [list(questions[:2]), [questions[0], questions[2]]]
    else:
        right = right and texts == [FIRST, "answer 1", FOLLOW_UP, "answer 2"]
    return {
        "api": api,
        "model": name,
        "signed": signed,
        "stream": stream,
        "travel": travel,
        "calls": len(bodies),
        "sessions": len(sessions),
        "hows": hows,
        "first_session": texts,
        "user_turns": users,
        "outputs": outputs,
        "rejected": rejected,
        "errors": errors,
        "problems": problems,
        "right": right,
        "bodies": bodies,
    }


def verdict(run: dict[str, Any]) -> str:
    """right; rejected: the stand-in refused a turn whose signed reasoning pydantic-ai did not
    send back (it keeps none for a model its profile says cannot: the client's doing, not the
    proxy's); else WRONG."""
    if run["right"]:
        return "right"
    refusal = run["rejected"] or ""
    if run["signed"] and any(word in refusal for word in ("reasoning", "thinking", "signature")):
        return "rejected"
    return "WRONG"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--api", nargs="+", choices=APIS, default=list(APIS))
    parser.add_argument("--signed", choices=("yes", "no", "both"), default="both")
    parser.add_argument("--stream", action="store_true", help="also streamed (agent.run_stream)")
    parser.add_argument(
        "--travel", action="store_true", help="the travel stand-in and its tools instead"
    )
    parser.add_argument(
        "--dump", help="write every request body pydantic-ai sent to this JSON file"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message=".*deprecated by its provider")  # the model names
    signings = {"yes": [True], "no": [False], "both": [False, True]}[args.signed]
    streams = [False, True] if args.stream else [False]
    packages = ("pydantic-ai-slim", "openai", "anthropic")
    print(", ".join(f"{name} {version(name)}" for name in packages))
    runs = []
    for api in args.api:
        for name in (NAMES[api], STANDIN):
            for signed in signings:
                for stream in streams:
                    run = asyncio.run(harness(api, name, signed, stream, args.travel))
                    runs.append(run)
                    print(
                        f"{api:9} {name:17} {'signed' if signed else 'unsigned':8} "
                        f"{'streamed' if stream else 'whole':8} "
                        f"{run['calls']:2} calls {run['sessions']} sessions {run['hows']} "
                        f"{verdict(run)}"
                    )
                    if verdict(run) == "rejected":
                        print(f"  {run['rejected'][:300]}")
                    elif not run["right"]:
                        print(f"  first session: {run['first_session']}")
                        print(f"  user turns: {run['user_turns']}")
                        print(f"  outputs: {run['outputs']}")
                        for error in run["errors"]:
                            print(f"  error: {error}")
                        print(f"  rejected: {run['rejected']}")
                        for problem in run["problems"]:
                            print(f"  problem: {problem}")
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            json.dump(runs, f, ensure_ascii=False, indent=1)
    wrong = sum(verdict(r) == "WRONG" for r in runs)
    rejected = sum(verdict(r) == "rejected" for r in runs)
    print(f"{sum(r['right'] for r in runs)} of {len(runs)} runs right, {rejected} rejected")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
