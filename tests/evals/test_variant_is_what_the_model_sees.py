"""A variant is what the model saw (issue 36 item 1, DESIGN invariant 11).

A variant's tool descriptions reach the model whatever tools a run gets: a task's own tools
(``Task(tools=factory)``, the README's way for stateful tools) take the descriptions the
variant gives tools of their names, also when the agent replays. ``prompt_diff`` is read from
the requests the runs sent, so it never disagrees with the model's view. The optimiser, whose
proposals are variants, then improves descriptions with a factory as it does without.
"""

from __future__ import annotations

import json

import pytest

import agentnb as an
from agentnb import checks

from .desk import TASKS, agents, books_a_when_told, descriptions_sent, desk

CAREFUL = "Be careful."


async def test_a_factorys_tools_carry_the_variants_descriptions():
    """Fails on 9f180af: the run's tools were the factory's, described as the factory said."""
    base, told = agents()
    ev = await an.evaluate({"base": base, "told": told}, TASKS, progress=False)
    assert descriptions_sent(ev, "told") == [["Book a room. Always book room A."]] * 2
    assert descriptions_sent(ev, "base") == [["Book a room."]] * 2
    assert ev.record("told", "book").passed and not ev.record("base", "book").passed
    assert ev.compare("base", "told").improved == ["book"]


async def test_a_replaying_variant_sends_its_descriptions_too():
    _, told = agents()
    live = await an.evaluate({"told": told}, TASKS, progress=False)
    recording = an.ToolRecording.from_evaluation(live)
    again = await an.evaluate({"told": told.replaying(recording)}, TASKS, progress=False)
    assert descriptions_sent(again, "told") == [["Book a room. Always book room A."]] * 2
    assert again.record("told", "book").passed and recording.misses == []


async def test_the_prompt_diff_is_what_the_runs_sent():
    """Fails on 9f180af: prompt_diff read the agents, not the requests. A setup that rewrites
    the instructions, and a description of a tool no run gets: the diff shows what was sent."""

    def shouting(agent):
        agent.instructions = agent.instructions.upper()

    @an.tool
    def weather(city: str) -> str:
        """Weather in a city."""
        return "sunny"

    model = an.models.FunctionModel(books_a_when_told)
    a = an.Agent("You book rooms.", [*desk()[0], weather], model)
    b = a.copy(instructions="You book rooms, quickly.", descriptions={"weather": "Rain or shine."})
    tasks = an.TaskSet([TASKS["book"].model_copy(update={"setup": shouting})])
    ev = await an.evaluate({"a": a, "b": b}, tasks, progress=False)
    diff = ev.compare("a", "b").prompt_diff
    assert list(diff) == ["instructions"]  # weather was in no request: nothing changed there
    assert [(row["op"], row["text"]) for row in diff["instructions"]] == [
        ("removed", "YOU BOOK ROOMS."),
        ("added", "YOU BOOK ROOMS, QUICKLY."),
    ]
    # what the agents said differs from what was sent; the evaluation keeps both apart
    assert ev.descriptions["b"]["tools"]["weather"] == "Rain or shine."


async def test_a_loaded_evaluation_diffs_what_its_traces_sent(tmp_path):
    base, told = agents()
    ev = await an.evaluate({"base": base, "told": told}, TASKS, progress=False)
    back = an.Evaluation.load(ev.save(tmp_path / "ev.jsonl"))
    assert back.compare("base", "told").prompt_diff == ev.compare("base", "told").prompt_diff
    assert list(back.compare("base", "told").prompt_diff["tools"]) == ["book"]


# -- the optimiser: a run that can only improve a description ------------------------------------
def _careful_reply(request):
    """'ok' only when the lookup tool's description says to be careful."""
    description = request.tools[0]["function"]["description"]
    return "ok" if CAREFUL in description else "no"


def lookup_tools():
    @an.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    return [lookup]


def _describes_carefully(request):
    document = json.loads(request.messages[-1]["content"])
    now = document["current"]["tools"]["lookup"]
    return json.dumps({"rationale": "say it", "tools": {"lookup": f"{now} {CAREFUL}"}})


@pytest.mark.parametrize("factory", [False, True], ids=["agent's tools", "task's factory"])
async def test_the_optimiser_improves_a_description_with_a_factory_as_without(factory):
    """Fails on 9f180af with the factory: 0% -> 0%, the proposals never reached the model."""
    agent = an.Agent("Answer in one word.", lookup_tools(), an.models.FunctionModel(_careful_reply))

    def task(name):
        tools = {"tools": lookup_tools} if factory else {}
        return an.Task(name, f"task {name}", [checks.answer_contains("ok")], **tools)

    train = an.TaskSet([task(f"t{i}") for i in range(4)])
    held = an.TaskSet([task(f"v{i}") for i in range(6)])
    proposer = an.models.FunctionModel(_describes_carefully, name="careful-describer")
    opt = await an.optimize(
        agent, train, validation=held, proposer=proposer, budget=40, seed=0, progress=False
    )
    assert opt.candidate("c0").validation == 0.0
    assert opt.best.id == "c1" and opt.best.status == "promoted"
    assert opt.best.validation == 1.0
    assert opt.compare("c0", "c1").prompt_diff["tools"]["lookup"][-1]["text"].endswith(CAREFUL)
