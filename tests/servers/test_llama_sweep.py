"""A two-variant evaluation on the real SmolLM2 server, end to end (the `local` extra).

Assert structure, never wording: the tiny model's choices vary with the server's cache.
"""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb import checks

pytestmark = pytest.mark.local_model


async def test_a_two_prompt_sweep_on_smollm2_runs_end_to_end(llama_server, tmp_path):
    model = llama_server.model(
        "smollm2", text_actions=True, params={"max_tokens": 64, "temperature": 0}
    )
    base = an.travel.travel_agent(model=model, language="en", max_iterations=2)
    terse = base.copy(instructions="You are a travel assistant. Answer in one sentence.")
    tasks = an.TaskSet(
        [
            an.Task(
                "weather",
                "What is the weather in Beijing on Friday?",
                checks=[
                    checks.calls("search_weather", city=["Beijing", "北京"]),
                    checks.grounded(),
                ],
            ),
            an.Task(
                "hello",
                "Hello",
                checks=[
                    checks.stops_with("final_answer"),
                    checks.judge(model, "The answer greets the user or offers travel help."),
                ],
            ),
        ]
    )
    cache = an.evals.ResponseCache()
    ev = await an.evaluate(
        {"article": base, "terse": terse}, tasks, concurrency=1, timeout=240, cache=cache
    )
    assert len(ev.records) == 4 and {r.variant for r in ev.records} == {"article", "terse"}
    for record in ev.records:
        if record.task == "weather":
            assert record.outcome in ("pass", "fail"), record  # no infrastructure error
        else:  # the 135M judge often gives no verdict: that is an error, never a pass
            assert record.outcome in ("pass", "fail", "error"), record
            assert record.outcome != "error" or "judge gave no structured verdict" in record.error
        assert record.model_calls >= 1 and record.tokens > 0 and record.seed
        assert ev.session(record.variant, record.task).is_valid
    assert set(ev.summary.index) == {"article", "terse"}
    verdict = ev.record("article", "hello").checks[1]  # the local model as a judge
    assert verdict.name.startswith("judge(") and verdict.reason  # its reasoning, or why not
    assert ev.compare("article", "terse").pairs == 2
    again = await ev.rerun(failed=True, errors=True)  # the failures again, from the cache
    assert len(again.records) == 4 and cache.hits >= sum(r.outcome == "fail" for r in ev.records)
    back = an.Evaluation.load(ev.save(tmp_path / "smollm2.jsonl"))
    assert back.runs.drop(columns="latency").equals(ev.runs.drop(columns="latency"))
