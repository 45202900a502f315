"""Agents the optimize command tests name on its command line."""

import json

import agentnb as an
from agentnb.travel import TravelModel


def weak():
    return an.travel.travel_agent(model=TravelModel("fabricate"), instructions="你是差旅助手。")


def article():
    return an.travel.travel_agent()


# -- a toy the gate can be reasoned about by hand (issue 36): 13 tasks, 7 held out, the agent as
# given passing 4 of the 7; a hard task passes only once the instructions say "Be careful."
CAREFUL = "Be careful."


def _toy_reply(request):
    system = next((m["content"] for m in request.messages if m["role"] == "system"), "")
    asked = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
    return "no" if "hard" in asked and CAREFUL not in system else "ok"


def toy():
    """The toy task model's agent: 'ok' to every easy task, to a hard one only when careful."""
    return an.Agent("Answer in one word.", model=an.models.FunctionModel(_toy_reply, name="toy"))


def toy_sets():
    """(training, validation): 6 training tasks (2 hard), 7 held out (3 hard)."""

    def task(name):
        kind = name.rstrip("0123456789")
        return an.Task(name, f"a {kind} task", [an.checks.answer_contains("ok")], tags=[kind])

    train = an.TaskSet([task(n) for n in ("easy1", "easy2", "easy3", "easy4", "hard1", "hard2")])
    held = ("easy5", "easy6", "easy7", "easy8", "hard3", "hard4", "hard5")
    return train, an.TaskSet([task(n) for n in held])


def _adding(line):
    def propose(request):
        document = json.loads(request.messages[-1]["content"])
        now = document["current"]["instructions"]
        return json.dumps({"rationale": f"Adding: {line}", "instructions": f"{now}\n{line}"})

    return propose


def careful():
    """A proposer that adds "Be careful." to the instructions (the hard tasks then pass)."""
    return an.models.FunctionModel(_adding(CAREFUL), name="careful")


def brief():
    """A proposer that adds "Be brief." (which changes no answer of the toy)."""
    return an.models.FunctionModel(_adding("Be brief."), name="brief")


def toy_tasks():
    """The 13 toy tasks in one set (``--validation 0.5 --seed 0`` holds out the same 7)."""
    train, held = toy_sets()
    return an.TaskSet([*train, *held], name="toy")
