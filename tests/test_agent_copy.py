"""Agent.copy: every constructor setting carried over, read from the signature."""

from __future__ import annotations

import inspect

import pytest

import agentnb as an
from agentnb.agent import SETTINGS


@an.tool
def weather(city: str) -> str:
    """Weather of a city."""
    return "晴"


def test_settings_are_the_constructors_parameters():
    params = list(inspect.signature(an.Agent.__init__).parameters)[1:]
    assert list(SETTINGS) == params


def test_a_copy_carries_every_setting_given():
    policy = an.DropOldest()
    tokenizer = an.HeuristicTokenizer()
    model = an.models.ScriptedModel(["x"])
    given = dict(
        instructions="be brief", tools=[weather], model=model, name="a", max_iterations=3,
        repeat_limit=5, token_budget=900, stop_when=[lambda view: False],
        final_answer_on_stop=True, parallel_tool_calls=False, tool_timeout=2.0,
        model_params={"temperature": 0.3}, context_window=4000, reply_reserve=500,
        context=policy, tokenizer=tokenizer, replay=an.ToolRecording().source(),
        frame_results="delimit",
    )  # fmt: skip
    assert set(given) == set(SETTINGS), "a new constructor parameter: give it a value here"
    agent = an.Agent(**given)
    copy = agent.copy()
    for name in SETTINGS:
        mine, theirs = getattr(agent, name), getattr(copy, name)
        if name == "tools":
            assert list(mine) == list(theirs) and mine is not theirs
        else:
            assert mine == theirs, name
    # containers are the copy's own: changing them leaves the original alone
    copy.model_params["temperature"] = 1.0
    copy.stop_when.append(lambda view: True)
    assert agent.model_params == {"temperature": 0.3} and len(agent.stop_when) == 1


def test_a_copy_keeps_derived_defaults_derived():
    agent = an.Agent("x", model=an.models.ScriptedModel(["x"]))
    copy = agent.copy(context_window=8000)
    assert isinstance(copy.context, an.DropOldest)  # not the KeepAll the original derived


def test_copy_changes_and_descriptions():
    agent = an.Agent("x", [weather], model=an.models.ScriptedModel(["x"]))
    other = agent.copy(instructions="y", descriptions={"weather": "天气"})
    assert other.instructions == "y" and other.tools["weather"].description == "天气"
    assert other.tools["weather"].schema["function"]["description"] == "天气"
    assert agent.tools["weather"].description == "Weather of a city."
    with pytest.raises(an.ConfigurationError, match="unknown settings"):
        agent.copy(instructons="typo")
    with pytest.raises(an.ConfigurationError, match="unknown tools"):
        agent.copy(descriptions={"nope": "x"})


def test_the_agent_imports_nothing_from_evals():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(inspect.getfile(an.Agent)).read_text(encoding="utf-8"))
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [m for m in imported if "evals" in m], imported
