"""The evaluation views in JupyterLab + Chromium: the matrix filling in during a sweep, a click
opening a run, the trajectory diff of two runs, the Playground re-running after an edit while
Stop stays responsive. Screenshots go to .artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import time

import pytest

from tests.browser.lab import opened

SETUP = """
import asyncio
import agentnb as an
from agentnb.travel import INSTRUCTIONS, TravelModel

TOOLS_FIRST = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\\n"

def slow(model, delay):
    async def think(request):
        await asyncio.sleep(delay)
        return await model.complete(request)
    return an.models.FunctionModel(think, name="slow-" + model.name)

base = an.travel.travel_agent(model=slow(TravelModel(), 0.03))
variants = {
    "article": base,
    "no_tools_rule": base.copy(instructions=INSTRUCTIONS.replace(TOOLS_FIRST, ""),
                               model=slow(TravelModel("fabricate"), 0.03)),
}
tasks = an.TaskSet(list(an.travel.task_set())[:12])
print("ready")
"""
MATRIX = "ev = an.evals.start(variants, tasks, repeats=2, concurrency=2)\nan.widgets.EvalMatrix(ev)"
WAIT = "await ev\nprint(len(ev.records), ev.total)"
PLAYGROUND = (
    "pg = an.widgets.Playground(an.travel.travel_agent(model=slow(TravelModel('fabricate'), 0.05)),"
    " tasks)\npg"
)
PG_CHECK = "print(list(pg.variants), pg.comparison and pg.comparison.regressed)"
CELLS = [SETUP, MATRIX, WAIT, PLAYGROUND, PG_CHECK]


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "evals.ipynb", CELLS) as notebook:
        yield notebook


def _painted(out):
    return out.locator(".anb-m-cell:not(.anb-m-todo)").count()


def test_the_matrix_fills_in_while_the_sweep_runs_and_a_click_opens_a_run(nb):
    nb.run(1)
    out = nb.output(1)
    out.locator(".anb-m-table").wait_for(timeout=30_000)
    total = out.locator(".anb-m-cell").count()
    assert total == 24
    deadline = time.monotonic() + 30
    while _painted(out) == 0 and time.monotonic() < deadline:
        nb.page.wait_for_timeout(100)
    mid = _painted(out)
    nb.shot("evals-matrix-filling", out)
    assert 0 < mid < total, "the matrix fills in while the sweep runs"
    nb.run(2)
    assert nb.stdout(2).split() == ["48", "48"]
    out.locator(".anb-m-count", has_text="done").wait_for(timeout=30_000)
    assert _painted(out) == total
    assert out.locator(".anb-m-summary tr").count() >= 3  # header + 2 variants
    nb.shot("evals-matrix-done", out)
    out.locator(".anb-m-fail, .anb-m-mixed").first.click()
    out.locator(".anb-m-run .anb-card").first.wait_for(timeout=30_000)
    assert out.locator(".anb-m-checks .anb-bad").count() >= 1  # a failed check, with its reason
    nb.shot("evals-matrix-open-run", out)
    out.get_by_text("trajectory diff of the variants").click()
    out.locator(".anb-t-table").wait_for(timeout=30_000)
    assert "first divergence at step 1" in out.locator(".anb-m-detail").inner_text()
    out.locator(".anb-t-row").first.click()
    out.locator(".anb-t-detail .anb-diff").first.wait_for(timeout=30_000)
    nb.shot("evals-trajectory-diff", out)


def test_the_playground_reruns_after_an_edit_and_stop_stays_responsive(nb):
    nb.run(3)
    out = nb.output(3)
    out.locator(".anb-pg-instructions").wait_for(timeout=30_000)
    run = out.get_by_role("button", name="▶ Run")
    run.click()
    out.get_by_text("v0 done").wait_for(timeout=60_000)
    area = out.locator(".anb-pg-instructions")
    text = area.input_value()
    tools_first = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\n"
    assert tools_first in text
    area.fill(text.replace(tools_first, ""))
    run.click()
    out.locator(".anb-statusbar progress").wait_for(timeout=30_000)
    t0 = time.monotonic()
    out.get_by_role("button", name="■ Stop").click()
    out.get_by_text("stopped").first.wait_for(timeout=10_000)
    assert time.monotonic() - t0 < 10, "Stop answers while the sweep runs"
    nb.shot("evals-playground-stopped", out)
    run.click()
    out.get_by_text("v1 done").wait_for(timeout=60_000)
    out.get_by_text("regressed:").first.wait_for(timeout=10_000)
    nb.shot("evals-playground-compared", out)
    nb.run(4)
    assert nb.stdout(4).startswith("['v0', 'v1']")  # the stopped Run left no variant
    out.get_by_role("button", name="trajectory diff").first.click()
    out.locator(".anb-t-table").wait_for(timeout=30_000)
    nb.shot("evals-playground-diff", out)
