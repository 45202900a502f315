"""Record the SmolLM2 cassettes in data/cassettes (see its README). Needs the `local` extra.

    .venv/bin/python tests/servers/record_cassettes.py            # every scenario
    .venv/bin/python tests/servers/record_cassettes.py format     # only format_smollm2.jsonl
    .venv/bin/python tests/servers/record_cassettes.py sweep      # only sweep_smollm2.jsonl
    .venv/bin/python tests/servers/record_cassettes.py prompts    # only the server prompts
    .venv/bin/python tests/servers/record_cassettes.py optimise   # only optimise_smollm2_*.jsonl

travel_smollm2_tools.prompts.json keeps, for each exchange of travel_smollm2_tools.jsonl, the
prompt the server's `chatml-function-calling` template builds from its request (llama-cpp-python
renders it without a model), so notebook 12 shows what SmolLM2 was given without the `local`
extra.

Each scenario starts from an empty file. The runs are what the tiny model did on that day:
re-recording changes them (llama.cpp output varies with its prompt cache, even at T=0).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import agentnb as an
from agentnb.models import Cassette
from agentnb.models.local import LocalServer, server_prompt
from agentnb.travel.sweeps import (
    OPTIMISE,
    PROPOSER_PARAMS,
    SWEEP_PARAMS,
    smollm2_optimisation,
    smollm2_sweep,
)

ROOT = Path(__file__).resolve().parents[2] / "data" / "cassettes"
QUESTION = "What is the weather in Beijing on Friday, and is there a flight from Shanghai?"
PLAIN = "In one sentence: why do travel agents check the weather?"


async def record(server: LocalServer) -> None:
    # The settings tests/models/test_cassettes.py replays with: keep them in step.
    path = ROOT / "travel_smollm2_tools.jsonl"
    path.unlink(missing_ok=True)
    model = Cassette(path).record(server.model("smollm2-tools"))
    agent = an.travel.travel_agent(model=model, language="en", max_iterations=3)
    session = an.Session()
    async for event in agent.stream(QUESTION, session=session):
        if type(event).__name__ in ("ModelResponded", "Decided", "ToolFinished", "RunStopped"):
            print("  ", repr(event)[:160], flush=True)
    print(f"{path.name}: {len(session.messages)} messages, valid={session.is_valid}")
    record_prompts(path)
    path = ROOT / "plain_smollm2_stream.jsonl"
    path.unlink(missing_ok=True)
    agent = an.Agent(
        "You are a helpful travel assistant.",
        [],
        model=Cassette(path).record(server.model("smollm2", stream=True)),
    )
    result = await agent.run(PLAIN, session=an.Session())
    print(f"{path.name}: {result.stop_reason}: {result.output!r}")


# Format instability (article 002 §5.3): one forced tool call per request, a plain tool
# description against one with few-shot examples, at temperature 0 and 1, eight seeds each.
# notebooks/12_real_model.ipynb builds the same requests: keep the two in step.
FORMAT_QUESTION = "What is the weather in Beijing on January 10, 2025?"
FORMAT_PLAIN = "Weather for a city on a date."
FORMAT_FEW_SHOT = (
    FORMAT_PLAIN + " Examples:\n"
    '"weather in Paris on March 3, 2025" -> {"city": "Paris", "date": "2025-03-03"}\n'
    '"Tokyo, 2025-07-01" -> {"city": "Tokyo", "date": "2025-07-01"}'
)


def format_agent(model: an.models.OpenAIModel, description: str) -> an.Agent:
    def search_weather(city: str, date: str) -> dict:
        return {"city": city, "date": date, "weather": "sunny"}

    return an.Agent(
        "You are a travel assistant. Use the tools.",
        [an.tool(search_weather, description=description)],
        model=model,
        max_iterations=1,
        model_params={"tool_choice": {"type": "function", "function": {"name": "search_weather"}}},
    )


async def record_format(server: LocalServer) -> None:
    path = ROOT / "format_smollm2.jsonl"
    path.unlink(missing_ok=True)
    cassette = Cassette(path)
    for description in (FORMAT_PLAIN, FORMAT_FEW_SHOT):
        for temperature in (0.0, 1.0):
            for seed in range(8):
                params = {"temperature": temperature, "seed": seed, "max_tokens": 64}
                model = cassette.record(server.model("smollm2-tools", params=params))
                result = await format_agent(model, description).run(FORMAT_QUESTION)
                args = [c.function.arguments for c in result.tool_calls]
                print(f"  T={temperature} seed={seed} few-shot={description != FORMAT_PLAIN}", args)
    print(f"{path.name}: {len(Cassette(path).entries)} exchanges")


async def record_sweep(server: LocalServer) -> None:
    """Notebook 13's two-prompt sweep: agentnb.travel.sweeps holds its settings."""
    path = ROOT / "sweep_smollm2.jsonl"
    path.unlink(missing_ok=True)
    model = Cassette(path).record(server.model("smollm2", text_actions=True, params=SWEEP_PARAMS))
    variants, tasks = smollm2_sweep(model)
    ev = await an.evaluate(variants, tasks, concurrency=1, timeout=600, progress=False)
    print(f"{path.name}: {ev!r}")


def record_prompts(path: Path = ROOT / "travel_smollm2_tools.jsonl") -> None:
    """For each exchange, the prompt the template built from its request (what the model read)."""
    import json
    from importlib.metadata import version

    prompts = {
        "cassette": path.name,
        "template": "chatml-function-calling",
        "llama_cpp_python": version("llama-cpp-python"),
        "prompts": [
            {"key": e["key"], "prompt": server_prompt(e["request"]["body"])}
            for e in Cassette(path).entries
        ],
    }
    out = path.with_suffix(".prompts.json")
    out.write_text(json.dumps(prompts, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{out.name}: {len(prompts['prompts'])} server prompts")


async def record_optimise(server: LocalServer) -> None:
    """Notebook 16's optimiser run: SmolLM2 as the task model and as the proposer."""
    task_path = ROOT / "optimise_smollm2_task.jsonl"
    proposer_path = ROOT / "optimise_smollm2_proposer.jsonl"
    for path in (task_path, proposer_path):
        path.unlink(missing_ok=True)
    model = Cassette(task_path).record(
        server.model("smollm2", text_actions=True, params=SWEEP_PARAMS)
    )
    proposer = Cassette(proposer_path).record(server.model("smollm2", params=PROPOSER_PARAMS))
    agent, train, validation = smollm2_optimisation(model)
    opt = await an.optimize(
        agent, train, validation=validation, proposer=proposer, progress=True, **OPTIMISE
    )
    print(opt.summary())
    print(opt.history[["event", "reason"]].to_string())


def main(argv: list[str]) -> int:
    if argv[1:] == ["prompts"]:
        record_prompts()
        return 0
    with LocalServer() as server:
        if argv[1:] == ["sweep"]:
            asyncio.run(record_sweep(server))
            return 0
        if argv[1:] == ["optimise"]:
            asyncio.run(record_optimise(server))
            return 0
        if argv[1:] != ["format"]:
            asyncio.run(record(server))
            asyncio.run(record_sweep(server))
        asyncio.run(record_format(server))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
