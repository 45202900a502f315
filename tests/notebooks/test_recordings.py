"""The evidence notebook 12 shows from recordings is what the real server builds.

`data/cassettes/travel_smollm2_tools.prompts.json` holds, per recorded exchange, the prompt
llama-cpp-python's `chatml-function-calling` template builds from the request (written by
`tests/servers/record_cassettes.py prompts`). Notebook 12 shows it under `make lab`, where
llama-cpp-python is not installed; here, where it is, each prompt is rendered again.
"""

from __future__ import annotations

import json

import pytest

from agentnb.models import Cassette
from tests.notebooks.labenv import ROOT

CASSETTE = ROOT / "data" / "cassettes" / "travel_smollm2_tools.jsonl"


def recorded() -> dict:
    return json.loads(CASSETTE.with_suffix(".prompts.json").read_text(encoding="utf-8"))


def test_one_recorded_prompt_per_exchange_and_the_tool_results_are_empty():
    prompts, entries = recorded()["prompts"], Cassette(CASSETTE).entries
    assert [p["key"] for p in prompts] == [e["key"] for e in entries]
    for p, e in zip(prompts, entries, strict=True):
        sent = e["request"]["body"]["messages"]
        tools = sum(m["role"] == "tool" for m in sent)
        assert p["prompt"].count("<|im_start|>tool\n<|im_start|>") == tools  # each one, empty


def test_the_recorded_prompts_are_what_the_template_renders_today():
    pytest.importorskip("llama_cpp", reason="the `local` extra renders the prompts (`make local`)")
    from agentnb.models.local import server_prompt

    for p, e in zip(recorded()["prompts"], Cassette(CASSETTE).entries, strict=True):
        assert p["prompt"] == server_prompt(e["request"]["body"])
