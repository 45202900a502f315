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


def desk(agent):
    """A task's setup: the state its end-state checks read."""
    return {"booked": ["city-0"]}


def booked(state):
    return bool(state["booked"])


def stopped_once(result):
    """A check that reads the run's events (kept in its trace)."""
    return sum(type(e).__name__ == "RunStopped" for e in result.events) == 1


def sunglasses_checks():
    """What ``python -m agentnb rescore --checks`` names: checks for every task."""
    return [an.checks.answer_contains("sunglasses")]


# -- a seeded flaky model (the noise floor): "coin" tasks pass on about half the seeds, "sure"
# tasks always, unless the instructions break the first of them ("slip") or all ("break").
def flaky_reply(request, seed=None):
    import random

    system = request.messages[0]["content"]
    asked = request.messages[-1]["content"]
    if asked.startswith("coin"):
        return "ok" if random.Random(f"{seed}{asked}").random() < 0.5 else "no"
    if "break" in system or ("slip" in system and asked == "sure 0"):
        return "no"
    return "ok"


def flaky_agent(instructions: str = "Answer.") -> an.Agent:
    return an.Agent(instructions, model=an.models.FunctionModel(flaky_reply, name="flaky"))


def flaky_tasks() -> an.TaskSet:
    names = [f"coin {i}" for i in range(3)] + [f"sure {i}" for i in range(10)]
    return an.TaskSet(
        [an.Task(n.replace(" ", "-"), n, checks=[an.checks.answer_contains("ok")]) for n in names],
        name="flaky",
    )


def flaky_variants():
    return {
        "base": flaky_agent(),
        "slip": flaky_agent("Answer. slip"),
        "break": flaky_agent("break"),
    }


def locked_desk(agent):
    """A setup whose state a file cannot keep (a lock): its end state is saved as not kept."""
    import threading

    return {"booked": ["city-0"], "lock": threading.Lock()}
