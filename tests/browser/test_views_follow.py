"""Views that follow what happened (issue 36), in JupyterLab + Chromium: the Playground's text
areas after a Run started from code, and a matrix's run brought into view when a cell is
clicked. Screenshots go to .artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.browser.lab import opened

SETUP = """
import agentnb as an
from agentnb.travel import INSTRUCTIONS, TravelModel

TOOLS_FIRST = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。\\n"
EDITED = INSTRUCTIONS.replace(TOOLS_FIRST, "")
article = an.TaskSet(list(an.travel.task_set(tags=["article"])))
print("ready")
"""
PLAYGROUND = "pg = an.widgets.Playground(an.travel.travel_agent(model=TravelModel('fabricate')), article)\npg"
CODE_RUNS = "await pg.run()\nawait pg.run(instructions=EDITED)\nprint(list(pg.variants))"
LATE = "pg"
CHECK = "print(list(pg.variants), pg.comparison.prompt_diff == {}, pg.comparison.verdict)"
MATRIX = """
variants = {"article": an.travel.travel_agent(),
            "no_tools_rule": an.travel.travel_agent(model=TravelModel("fabricate"), instructions=EDITED)}
ev = await an.evaluate(variants, an.travel.task_set(), progress=False)
an.widgets.EvalMatrix(ev)
"""
CELLS = [SETUP, PLAYGROUND, CODE_RUNS, LATE, CHECK, MATRIX]

#: Where an element sits against the notebook's scrolling box: [top, bottom, box top, box bottom].
PLACE = """(el) => {
  let box = el.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight + 1 &&
                  /(auto|scroll)/.test(getComputedStyle(box).overflowY))) box = box.parentElement;
  const r = el.getBoundingClientRect(), b = (box || document.documentElement).getBoundingClientRect();
  return [r.top, r.bottom, b.top, b.bottom];
}"""


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "follow.ipynb", CELLS) as notebook:
        yield notebook


def test_the_playground_s_text_areas_follow_a_run_started_from_code(nb):
    nb.run(1)
    live = nb.output(1)
    area = live.locator(".anb-pg-instructions")
    area.wait_for(timeout=30_000)
    assert "你必须使用工具" in area.input_value()  # v0: the agent as given
    nb.run(2)
    assert nb.stdout(2).strip() == "['v0', 'v1']"
    live.get_by_text("v1 done").wait_for(timeout=60_000)
    text = area.input_value()
    assert "你必须使用工具" not in text and text.startswith("你是差旅助手"), text
    area.scroll_into_view_if_needed()
    nb.shot("playground-after-code-run", live)
    # a view displayed after the runs shows v1's text too
    nb.run(3)
    late = nb.output(3).locator(".anb-pg-instructions")
    late.wait_for(timeout=30_000)
    assert late.input_value() == text
    # Run from the browser without typing: the same text as v1, so nothing changed
    live.get_by_role("button", name="▶ Run").click()
    live.get_by_text("v2 done").wait_for(timeout=60_000)
    verdict = live.locator(".anb-sub", has_text="v2 against v1")
    verdict.wait_for(timeout=10_000)
    assert "every pair agreed" in verdict.inner_text()
    verdict.scroll_into_view_if_needed()
    nb.shot("playground-browser-run-after-code-run", live)
    nb.run(4)
    assert nb.stdout(4).startswith("['v0', 'v1', 'v2'] True no evidence of a difference")


def test_a_clicked_run_of_the_matrix_opens_in_view(nb):
    nb.run(5)
    out = nb.output(5)
    out.locator(".anb-m-table").wait_for(timeout=60_000)
    first = out.locator(".anb-m-cell").first
    first.scroll_into_view_if_needed()
    detail = out.locator(".anb-m-detail")
    top, bottom, box_top, box_bottom = detail.evaluate(PLACE)
    assert top > box_bottom, "the run opens below the grid and the summary, out of view"
    out.locator(".anb-m-fail").first.click()
    out.locator(".anb-m-run .anb-card").first.wait_for(timeout=30_000)
    top, bottom, box_top, box_bottom = detail.evaluate(PLACE)
    assert box_top - 1 <= top < box_bottom, (top, bottom, box_top, box_bottom)
    nb.shot("matrix-run-in-view", nb.page)
