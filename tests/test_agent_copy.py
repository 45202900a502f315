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


def test_an_agent_without_a_window_adopts_its_model_s():
    """Issue 36: the local server's model says its 4096-token window; an agent given none of
    its own adopts it (and trims with DropOldest), a window given wins, a copy onto another
    model adopts that model's, and a reserve the model's window cannot hold is refused."""
    model = an.models.OpenAIModel("m", base_url="http://127.0.0.1:9/v1", context_window=4096)
    agent = an.Agent("x", model=model)
    assert agent.context_window == 4096 and isinstance(agent.context, an.DropOldest)
    assert an.Agent("x", model=model, context_window=2000).context_window == 2000
    assert agent.copy(model=an.models.ScriptedModel(["x"])).context_window is None
    assert an.Agent("x", model=an.models.ScriptedModel(["x"])).context_window is None
    agent.context_window = 1500
    assert agent.context_window == 1500
    agent.context_window = None  # back to the model's
    assert agent.context_window == 4096
    small = an.models.OpenAIModel("m", base_url="http://127.0.0.1:9/v1", context_window=512)
    with pytest.raises(
        an.ConfigurationError, match=r"reply_reserve \(1000\).*\(512, the model's\)"
    ):
        an.Agent("x", model=small)
    assert an.Agent("x", model=small, reply_reserve=100).context_window == 512
    with pytest.raises(an.ConfigurationError, match="context_window must be a whole number"):
        an.models.OpenAIModel("m", base_url="http://127.0.0.1:9/v1", context_window=0)


def test_the_local_server_s_model_says_its_window():
    from agentnb.models.local import LocalServer

    server = LocalServer(__file__, port=18081, n_ctx=2048)  # not started: no model needed
    assert server.model("smollm2").context_window == 2048
    assert server.model("smollm2", context_window=1024).context_window == 1024
    assert an.Agent("x", model=server.model()).context_window == 2048
