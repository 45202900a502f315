"""A toy for a week of tuning (issue 41): a counting task model, weather tasks, two prompts.

The model answers a task's city with its weather ("<city>: sunny, 12°C.") unless told to be
terse, then on odd seeds only "OK." (deterministic per seed). Every call is counted in CALLS,
so a test can prove that a rescore called no agent model."""

from __future__ import annotations

import agentnb as an

CALLS: list[str] = []
CITIES = ["Beijing", "Shanghai", "Hangzhou", "Chengdu", "Xi'an", "Wuhan", "Nanjing", "Suzhou"]


def reply(request, seed=None):
    CALLS.append(request.messages[-1]["content"])
    system = request.messages[0]["content"]
    city = request.messages[-1]["content"].split()[0]
    if "terse" in system and (seed or 0) % 2:
        return "OK."
    if "terse" in system:
        return f"{city}: sunny."
    return f"{city}: sunny, 12°C.\nTake sunglasses."


def model():
    return an.models.FunctionModel(reply, name="weather-toy")


def polite():
    return an.Agent("You are a weather assistant. Answer in full sentences.", model=model())


def terse():
    return polite().copy(instructions="You are a weather assistant. Answer terse.")


def tasks(n: int = 8) -> an.TaskSet:
    return an.TaskSet(
        [
            an.Task(f"city-{i}", f"{c} weather?", checks=[an.checks.answer_contains("sunny")])
            for i, c in enumerate(CITIES[:n])
        ],
        name="weather",
    )


def variants():
    return {"polite": polite(), "terse": terse()}
