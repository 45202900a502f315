"""Notebooks 02 and 03 in JupyterLab + Chromium: the stand-in's reasoning on the assistant
cards, and what it understood beside a request in the request inspector (issue #16).

The curriculum's own notebooks are copied into the lab and run cell by cell; screenshots go to
.artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from tests.browser.lab import Notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def open_and_run(lab, context, name: str) -> tuple[Notebook, list[str]]:
    shutil.copy(NOTEBOOKS / name, lab.root / name)
    cells = nbformat.read(NOTEBOOKS / name, as_version=4).cells
    notebook = Notebook(context.new_page(), lab, name)
    for i, cell in enumerate(cells):
        if cell.cell_type == "code" and cell.source.strip():
            notebook.run(i)
    return notebook, [c.source for c in cells]


def index(sources: list[str], start: str) -> int:
    return next(i for i, s in enumerate(sources) if s.startswith(start))


@pytest.fixture(scope="module")
def nb02(lab, context):
    notebook, sources = open_and_run(lab, context, "02_assemble.ipynb")
    yield notebook, sources
    notebook.page.close()


@pytest.fixture(scope="module")
def nb03(lab, context):
    notebook, sources = open_and_run(lab, context, "03_call_model_and_decide.ipynb")
    yield notebook, sources
    notebook.page.close()


def test_02_runs_and_shows_the_understood_table_beside_the_request(nb02):
    notebook, sources = nb02
    assert "all checks passed" in notebook.stdout(index(sources, "assert result.stop_reason"))
    # the inspector of the view's own run: what the stand-in understood, beside the request
    inspector = notebook.output(index(sources, "an.widgets.RequestInspector(session, 5"))
    table = inspector.locator(".anb-understood")
    table.wait_for(timeout=30_000)
    assert "not understood (0)" in (table.text_content() or "")
    assert "exactly as sent" in (inspector.text_content() or "")
    table.scroll_into_view_if_needed()
    notebook.shot("stand-in-understood-beside-request", inspector)
    # the one understood table of the lesson: an edited description and two new lines
    tuned = notebook.output(index(sources, "desk = an.travel.TravelTools()"))
    text = tuned.text_content() or ""
    assert "What TravelModel understood" in text and "hotel_choice" in text
    assert "the cheapest hotel with rooms" in text and "search_hotels" in text
    assert "Not understood (1)" in text and "对 VIP 用户要热情一些。" in text
    notebook.shot("stand-in-understood-edited", tuned)


def test_02_the_view_shows_the_reasoning_on_the_cards(nb02):
    notebook, sources = nb02
    view = notebook.output(index(sources, 'session = an.Session(id="trip-1")'))
    reasoning = view.locator(".anb-role-assistant .anb-reasoning")
    reasoning.first.wait_for(timeout=30_000)
    assert reasoning.first.get_attribute("open") is not None  # short: shown open
    assert "[today] 今天是 2025-01-06（周一），周五 → 2025-01-10（周五）" in (
        reasoning.first.text_content() or ""
    )
    notebook.shot("stand-in-reasoning-cards-02", view)


def test_03_runs_and_the_final_card_says_why(nb03):
    notebook, sources = nb03
    assert "all checks passed" in notebook.stdout(index(sources, "assert who.tool_calls"))
    view = notebook.output(index(sources, 'trip = an.Session(id="trip-1")'))
    view.locator(".anb-scroll").evaluate("el => { el.scrollTop = el.scrollHeight; }")
    final = view.locator(".anb-final .anb-reasoning")
    final.wait_for(timeout=30_000)
    text = final.text_content() or ""
    assert "[hotel_choice] 价格较低的一半里评分最高 → 全季酒店" in text
    assert "[budget] 880 + 520 = 1400，预算 3000 → 在预算内" in text
    notebook.shot("stand-in-reasoning-final-card-03", view)
    table = notebook.output(
        index(sources, 'pd.set_option("display.max_colwidth", None)     # whole')
    )
    assert "plan_calls" in (table.text_content() or "")
    notebook.shot("stand-in-rules-table-03", table)
