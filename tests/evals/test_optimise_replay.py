"""The SmolLM2 optimiser run replayed offline from its cassettes (notebook 16 does the same
when no server runs): every request the loop makes is one it made when it was recorded."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.evals.optimise import BudgetWarning
from agentnb.models import replay
from agentnb.travel.sweeps import OPTIMISE, smollm2_optimisation


async def test_the_recorded_smollm2_run_replays_exactly():
    model = replay.recorded("optimise_smollm2_task.jsonl").replay()
    proposer = replay.recorded("optimise_smollm2_proposer.jsonl").replay()
    agent, train, validation = smollm2_optimisation(model)
    with pytest.warns(BudgetWarning, match="with 2 validation tasks the gate can never"):
        opt = await an.optimize(
            agent, train, validation=validation, proposer=proposer, progress=False, **OPTIMISE
        )
    # what SmolLM2 did when recorded: it echoed the reflection document, cut off at 200 tokens
    assert [s["event"] for s in opt.steps] == ["no_proposal", "no_proposal"]
    assert all("no JSON object" in s["reason"] for s in opt.steps)
    assert opt.metric_calls == len(train) + len(validation) and opt.best.id == "c0"
    assert opt.proposer_calls == 2 and opt.proposer_spend == 0.0  # a replay costs nothing
    assert opt.stop_reason.startswith("nothing new in 2 steps")
    assert not any(r.outcome == "error" for r in opt.evaluation.records)  # no cassette miss
