"""The Playground shows what the stand-in understood of the text being typed (issue 25): the
table redraws as a line is typed, and a line it cannot read is marked not understood.
Screenshots go to .artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.browser.lab import opened

SETUP = """
import agentnb as an
agent = an.travel.travel_agent()
print("ready")
"""
PLAYGROUND = "pg = an.widgets.Playground(agent, an.travel.task_set(tags=['article']))\npg"


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "understood.ipynb", [SETUP, PLAYGROUND]) as notebook:
        yield notebook


def test_the_understood_table_follows_the_typing_and_marks_a_line_it_cannot_read(nb):
    nb.run(1)
    out = nb.output(1)
    table = out.locator(".anb-pg-understood .anb-understood")
    table.wait_for(timeout=30_000)
    assert "not understood (0)" in table.inner_text()
    nb.shot("playground-understood-before", out)
    area = out.locator(".anb-pg-instructions")
    area.click()
    area.press("End")
    area.press("Control+End")
    area.type("\n回答要简短。")  # a line it reads: length = brief
    row = table.locator("tr", has_text="length")
    row.locator("td", has_text="brief").wait_for(timeout=10_000)
    assert "回答要简短。" in row.inner_text()
    assert area.input_value().endswith("结论。\n回答要简短。")  # Enter reached the text area
    area.type("\n对 VIP 用户要热情一些。")  # a line it cannot read
    missed = out.locator(
        ".anb-pg-understood .anb-not-understood", has_text="对 VIP 用户要热情一些。"
    )
    missed.wait_for(timeout=10_000)
    assert "not understood (1)" in table.inner_text()
    missed.scroll_into_view_if_needed()
    nb.shot("playground-understood-typed", out)
    nb.shot("playground-understood-table", table)
    area.press("Control+End")
    for _ in range(len("\n对 VIP 用户要热情一些。")):
        area.press("Backspace")
    out.get_by_text("not understood (0)").wait_for(timeout=10_000)  # it follows deletions too
