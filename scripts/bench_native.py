"""The native models' row (``make bench``): per-call CPU of ``ResponsesModel`` and
``AnthropicModel`` against ``OpenAIModel``, the same work on the same fake server.

The core rows' work (5 model calls per run, 4 tools) through each client over
``httpx.MockTransport``: the server answers each API's body for the same replies, written by
that API's codec (as the stand-in writes them), so the difference is the client's own: writing
the request, reading the reply. Paired rounds, a fresh session per run; the ratio is to
``OpenAIModel`` in the same round. Target: within 1.3x.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import bench  # type: ignore[import-not-found]
import httpx

import agentnb as an
from agentnb.models import WIRES, Usage, WireRequest, coerce_response


def _bodies(api: str) -> list[bytes]:
    replies = [coerce_response(json.loads(t)) for t in bench.reply_texts()]
    if api == "chat":
        return [
            json.dumps(
                {"choices": [{"message": r.message.wire(), "finish_reason": "stop"}]}
            ).encode()
            for r in replies
        ]
    request = WireRequest(api, "bench", [])
    usage = Usage(100, 20, 120)
    return [json.dumps(WIRES[api].render(r, request, usage)).encode() for r in replies]


def _agent(api: str) -> an.Agent:
    bodies, turn = _bodies(api), [0]

    def handler(request: httpx.Request) -> httpx.Response:
        body = bodies[turn[0] % bench.CALLS]
        turn[0] += 1
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    cls = {"chat": an.models.OpenAIModel, "responses": an.models.ResponsesModel,
           "anthropic": an.models.AnthropicModel}[api]  # fmt: skip
    model = cls("bench", base_url="http://bench.invalid/v1", api_key="k",
                transport=httpx.MockTransport(handler))  # fmt: skip
    return an.Agent("你是差旅助手。", [an.tool(f) for f in bench.FUNCS.values()], model=model)


def native_models(rounds: int, runs: int) -> dict[str, list[float]]:
    agents = {api: _agent(api) for api in ("chat", "responses", "anthropic")}

    def sampler(agent: an.Agent) -> Callable[[], float]:
        async def once() -> None:
            result = await agent.run(bench.TASK, session=an.Session())
            assert result.stop_reason == "final_answer", result

        return lambda: bench.cpu(once, runs)

    s = bench.paired({api: sampler(a) for api, a in agents.items()}, rounds)
    print(
        f"\nNative APIs, {rounds} paired rounds: CPU per model call through each client "
        "(mock HTTP, the same replies), ratio to OpenAIModel [interquartile range]"
    )
    bench.row("OpenAIModel (Chat Completions)", s["chat"], s["chat"])
    bench.row("ResponsesModel (Responses API)", s["responses"], s["chat"], "target <= 1.3x")
    bench.row("AnthropicModel (Messages)", s["anthropic"], s["chat"], "target <= 1.3x")
    return s


if __name__ == "__main__":
    native_models(10, 10)
