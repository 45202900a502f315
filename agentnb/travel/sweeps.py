"""A sweep small enough for the real SmolLM2: two prompts on three English requests.

Notebook 13 runs it on the local server (``make local``) or, without one, replays the
recording in ``data/cassettes/sweep_smollm2.jsonl`` (made by
``tests/servers/record_cassettes.py`` with exactly these settings): a cassette answers only
the requests it recorded, so the variants, tasks and model settings here are its key.

    variants, tasks = smollm2_sweep(model)
    ev = await an.evaluate(variants, tasks, concurrency=1)

Notebook 16 runs the optimiser the same way (``smollm2_optimisation``: SmolLM2 as the task
model and as the proposer), replaying ``optimise_smollm2_task.jsonl`` and
``optimise_smollm2_proposer.jsonl`` when no server runs.
"""

from __future__ import annotations

from typing import Any

from ..agent import Agent
from ..evals import checks
from ..evals.tasks import Task, TaskSet
from .agent import travel_agent

__all__ = ["OPTIMISE", "PROPOSER_PARAMS", "SWEEP_PARAMS", "smollm2_optimisation", "smollm2_sweep"]

#: The model settings of the recording (``server.model("smollm2", ..., params=...)``).
SWEEP_PARAMS: dict[str, Any] = {"max_tokens": 64, "temperature": 0, "seed": 0}
#: The proposer's settings of the optimiser's recording (its replies are longer).
PROPOSER_PARAMS: dict[str, Any] = {"max_tokens": 200, "temperature": 0, "seed": 0}
#: ``an.optimize`` settings of the recording: small enough for a 135M model on one core.
OPTIMISE: dict[str, Any] = {
    "budget": 20,
    "minibatch": 2,
    "patience": 2,
    "concurrency": 1,
    "timeout": 600,
}


def smollm2_sweep(model: Any) -> tuple[dict[str, Agent], TaskSet]:
    """The two variants (the article's instructions in English, and a one-sentence prompt)
    on ``model``, and the three tasks with their checks."""
    base = travel_agent(model=model, language="en", max_iterations=2)
    terse = base.copy(instructions="You are a travel assistant. Answer in one sentence.")
    tasks = TaskSet(
        [
            Task(
                "weather-beijing",
                "What is the weather in Beijing on Friday?",
                checks=[checks.calls("search_weather"), checks.grounded()],
            ),
            Task(
                "flights-shanghai-beijing",
                "Find me a flight from Shanghai to Beijing on Friday.",
                checks=[checks.calls("search_flights"), checks.no_tool_errors()],
            ),
            Task("hello", "Hello", checks=[checks.stops_with("final_answer")]),
        ],
        name="smollm2",
    )
    return {"article": base, "terse": terse}, tasks


def smollm2_optimisation(model: Any) -> tuple[Agent, TaskSet, TaskSet]:
    """The agent (the English travel assistant with a one-sentence prompt) on ``model``, three
    training tasks (the sweep's) and two held-out validation tasks, for
    ``an.optimize(agent, train, validation=validation, proposer=..., **OPTIMISE)``."""
    agent = travel_agent(model=model, language="en", max_iterations=2).copy(
        instructions="You are a travel assistant."
    )
    _, train = smollm2_sweep(model)
    validation = TaskSet(
        [
            Task(
                "weather-shanghai",
                "What is the weather in Shanghai tomorrow?",
                checks=[checks.calls("search_weather"), checks.grounded()],
            ),
            Task("thanks", "Thank you!", checks=[checks.stops_with("final_answer")]),
        ],
        name="smollm2",
    )
    return agent, train, validation
