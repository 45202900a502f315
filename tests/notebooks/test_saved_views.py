"""A saved notebook shows a finished evaluation or optimisation as finished (issue 42).

The live matrix of ``an.evaluate`` and the live view of ``an.optimize`` are shown when their
work begins; a notebook saved after they ended read "0/585 runs running" with a summary of NaN
(notebook 13), "running: 0/150" (notebook 16). They are published again when the work ends
(``agentnb.display.show_live``): in every executed notebook, no output says a sweep or a
search is still running.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.notebooks.conftest import Executed
from tests.notebooks.labenv import ROOT
from tests.notebooks.test_article_map import output_text

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
#: What the first frame of a live view says, as saved before the fix.
RUNNING = (" runs running", "<Optimisation running")

pytestmark = pytest.mark.notebooks


def still_running(notebook: dict) -> list[str]:
    """Each cell id whose saved output says a sweep or a search is still running."""
    return [
        f"{cell.get('id')}: {line.strip()[:120]}"
        for cell in notebook["cells"]
        for line in output_text(cell).splitlines()
        if any(word in line for word in RUNNING)
    ]


def test_the_check_reads_a_first_frame():
    frame = "<Evaluation 5 variants × 39 tasks × 3 repeats: 0/585 runs running (0 pass)>"
    cell = {
        "id": "sweep",
        "outputs": [{"output_type": "display_data", "data": {"text/plain": frame}}],
    }
    assert still_running({"cells": [cell]}) == [f"sweep: {frame[:120]}"]
    done = frame.replace("0/585 runs running", "585/585 runs done")
    cell["outputs"][0]["data"]["text/plain"] = done
    assert still_running({"cells": [cell]}) == []


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_no_saved_view_is_left_running(executed: Callable[[str], Executed], notebook: str) -> None:
    run = executed(notebook)
    assert run.returncode == 0, run.report
    assert still_running(run.notebook) == []
