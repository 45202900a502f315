"""Record the SmolLM2 cassettes in data/cassettes (see its README). Needs the `local` extra.

    .venv/bin/python tests/servers/record_cassettes.py

Each scenario starts from an empty file. The runs are what the tiny model did on that day:
re-recording changes them (llama.cpp output varies with its prompt cache, even at T=0).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import agentnb as an
from agentnb.models import Cassette
from agentnb.models.local import LocalServer

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
    path = ROOT / "plain_smollm2_stream.jsonl"
    path.unlink(missing_ok=True)
    agent = an.Agent(
        "You are a helpful travel assistant.",
        [],
        model=Cassette(path).record(server.model("smollm2", stream=True)),
    )
    result = await agent.run(PLAIN, session=an.Session())
    print(f"{path.name}: {result.stop_reason}: {result.output!r}")


def main() -> int:
    with LocalServer() as server:
        asyncio.run(record(server))
    return 0


if __name__ == "__main__":
    sys.exit(main())
