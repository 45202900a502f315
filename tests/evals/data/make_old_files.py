"""Writes the fixtures of the previous file formats (see README.md here); run it with the
agentnb of commit 18c3fc4 on sys.path (the last that wrote them), e.g.

    git archive 18c3fc4 | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old .venv/bin/python -W ignore tests/evals/data/make_old_files.py tests/evals/data
"""

import asyncio
import json
import sys
from pathlib import Path

import agentnb as an
from agentnb.messages import AssistantMessage
from agentnb.models import FunctionModel, ModelResponse, Usage
from agentnb.travel import TravelModel

out = Path(sys.argv[1])


@an.tool
def weather(city: str) -> dict:
    """Weather in a city."""
    if city == "nowhere":
        raise ValueError("no such city")
    return {"city": city, "sky": "晴"}


def replies(request):
    last = request.messages[-1]
    if last["role"] == "user" and "weather" in str(last["content"]):
        city = "nowhere" if "nowhere" in last["content"] else "北京"
        return ModelResponse(
            AssistantMessage.model_validate(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {
                                "name": "weather",
                                "arguments": json.dumps({"city": city}),
                            },
                        }
                    ],
                }
            ),
            Usage(40, 8, 48),
        )
    if "slow" in str(request.messages[-1].get("content")):
        return None
    return ModelResponse(AssistantMessage(content="北京 晴"), Usage(30, 4, 34))


async def slowish(request):
    if "slow" in str(request.messages[-1].get("content")):
        await asyncio.sleep(1.0)
    r = replies(request)
    return r


async def main():
    an.evals.prices["fixture-model"] = (1.0, 2.0)
    tasks = an.TaskSet(
        [
            an.Task("tool", "weather in 北京", checks=[an.checks.answer_contains("晴")]),
            an.Task(
                "bad",
                "weather in nowhere",
                checks=[an.checks.answer_contains("晴"), an.checks.no_tool_errors()],
            ),
            an.Task(
                "turns",
                "and now?",
                history=("hello", {"role": "assistant", "content": "hi"}),
                checks=[an.checks.answer_contains("北京")],
            ),
            an.Task("slow", "slow please", checks=[an.checks.answer_contains("x")]),
        ]
    )
    a = an.Agent("be brief", [weather], model=FunctionModel(slowish, name="fixture-model"))
    b = a.copy(instructions="be very brief")
    cache = an.evals.ResponseCache()
    await an.evaluate({"a": a}, tasks, cache=cache, timeout=0.5, progress=False)
    ev = await an.evaluate(
        {"a": a, "b": b}, tasks, repeats=2, cache=cache, timeout=0.5, progress=False
    )
    ev.save(out / "evaluation_v2.jsonl")
    frame = ev.runs
    (out / "evaluation_v2.runs.json").write_text(
        frame.to_json(orient="records", force_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    weak = an.travel.travel_agent(model=TravelModel("fabricate"), instructions="你是差旅助手。")
    opt = await an.optimize(
        weak,
        an.TaskSet(list(an.travel.task_set())[:12]),
        proposer=TravelModel().proposer(),
        budget=40,
        progress=False,
    )
    opt.save(out / "optimisation_v1.jsonl")
    summary = {
        "proposer_calls": opt.proposer_calls,
        "proposer_tokens": list(opt.proposer_tokens),
        "proposer_spend": opt.proposer_spend,
        "summary": opt.summary(),
        "best": opt.best_id,
        "runs": len(opt.evaluation.records),
    }
    (out / "optimisation_v1.expected.json").write_text(
        json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


asyncio.run(main())
