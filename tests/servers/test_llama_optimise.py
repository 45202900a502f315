"""The optimiser with the real SmolLM2 as the task model and as the proposer (the `local`
extra). Any outcome is allowed and reported — a 135M model is expected to propose little —
but the run must end cleanly, within its budget, every step saying what happened."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.evals.optimise import BudgetWarning
from agentnb.evals.optimise.candidate import STATUSES
from agentnb.travel.sweeps import OPTIMISE, PROPOSER_PARAMS, SWEEP_PARAMS, smollm2_optimisation

pytestmark = pytest.mark.local_model

EVENTS = {"skipped", "no_proposal", "duplicate", "rejected", "pool", "promoted", "held", "stopped"}


async def test_smollm2_optimises_smollm2_and_the_run_says_what_happened(llama_server, capsys):
    model = llama_server.model("smollm2", text_actions=True, params=SWEEP_PARAMS)
    proposer = llama_server.model("smollm2", params=PROPOSER_PARAMS)
    agent, train, validation = smollm2_optimisation(model)
    with pytest.warns(BudgetWarning, match="with 2 validation tasks the gate can never promote"):
        opt = await an.optimize(
            agent, train, validation=validation, proposer=proposer, progress=False, **OPTIMISE
        )
    assert opt.done and not opt.cancelled and opt.stop_reason
    assert opt.metric_calls <= OPTIMISE["budget"] and opt.proposer_calls >= 1
    assert len(opt.evaluation.records) == opt.metric_calls
    assert all(s["event"] in EVENTS and s["reason"] for s in opt.steps)
    assert all(c.status in STATUSES and c.status != "running" for c in opt.candidates)
    p, c = opt.proposer_tokens
    assert p > 0 and c > 0 and opt.proposer_spend == 0.0  # metered; local is free
    with capsys.disabled():  # the honest outcome, in the test log
        print("\n" + opt.summary())
        print(opt.history[["event", "reason"]].to_string(max_colwidth=100))
