"""The optimiser's live view in JupyterLab + Chromium: mid-run (the tree and the chart filling
in, the current rationale), at the end, a candidate's highlighted diff against its parent,
and Stop keeping the incumbent. Screenshots go to .artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.browser.lab import opened

SETUP = """
import asyncio
import agentnb as an
from agentnb.travel import TravelModel

class Slow(TravelModel):
    # the stand-in, slowed down so that a person (and a screenshot) can watch the run
    async def complete(self, request):
        await asyncio.sleep(0.03)
        return await super().complete(request)

def weak(delay_model=Slow):
    return an.travel.travel_agent(model=delay_model("fabricate"), instructions="你是差旅助手。")

print("ready")
"""
LIVE = (
    "opt = an.evals.optimise.start(weak(), an.travel.task_set(), proposer=TravelModel().proposer(),"
    " budget=150, concurrency=2)\nan.widgets.OptimiseView(opt)"
)
WAIT = "await opt\nprint(opt.summary())"
STOP = (
    "slow = an.evals.optimise.start(weak(), an.travel.task_set(), "
    "proposer=TravelModel().proposer(), budget=300, concurrency=1)\nan.widgets.OptimiseView(slow)"
)
AFTER_STOP = "await slow\nprint(slow.stop_reason, '|', slow.best.id, slow.best.status)"
CELLS = [SETUP, LIVE, WAIT, STOP, AFTER_STOP]


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "optimise16.ipynb", CELLS) as notebook:
        yield notebook


def test_the_view_fills_in_while_the_run_goes_and_shows_the_end(nb):
    nb.run(1)
    out = nb.output(1)
    out.locator(".anb-o-tree").wait_for(timeout=30_000)
    # mid-run: a second candidate in the tree and the proposer's rationale, not yet done
    out.locator(".anb-o-node", has_text="c1").wait_for(timeout=60_000)
    out.locator(".anb-o-current .anb-o-rationale").wait_for(timeout=30_000)
    head = out.locator(".anb-toolbar").first.inner_text()
    assert "running" in head and "/150 metric calls" in head, head
    assert out.locator("svg.anb-o-chart circle").count() >= 1
    nb.shot("optimise-mid-run", out)
    nb.run(2)
    assert "validation success: 10% (c0, the agent as given) → 80%" in nb.stdout(2)
    out.locator(".anb-toolbar", has_text="done").wait_for(timeout=30_000)
    assert out.locator(".anb-o-badge.anb-o-promoted").count() >= 1
    assert out.locator("svg.anb-o-chart path.anb-o-step").count() == 1
    nb.shot("optimise-end", out)


def test_a_click_shows_the_candidates_diff_against_its_parent(nb):
    out = nb.output(1)
    out.locator(".anb-o-node", has_text="★ incumbent").click()
    diff = out.locator(".anb-o-detail .anb-linediff")
    diff.wait_for(timeout=10_000)
    added = diff.locator(".anb-ld-added").inner_text()
    assert "输出规范" in added or "必须使用工具" in added, added
    assert "promoted over c0" in out.locator(".anb-o-detail").inner_text()
    nb.shot("optimise-diff", out)


def test_stop_keeps_what_was_proven(nb):
    nb.run(3)
    out = nb.output(3)
    out.locator(".anb-o-badge.anb-o-promoted").wait_for(timeout=120_000)
    out.get_by_role("button", name="■ Stop").click()
    out.locator(".anb-toolbar .anb-bad", has_text="stopped").wait_for(timeout=30_000)
    nb.run(4)
    text = nb.stdout(4)
    assert text.startswith("stopped by request after") and text.strip().endswith("promoted"), text
    nb.shot("optimise-stopped", out)
