"""Issue 24's views in JupyterLab + Chromium: the output grid, the prompt diff, Stop showing
"stopped" with partial cells, and the Playground's trajectory diff of the repeat that flipped.
Screenshots go to .artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.browser.lab import opened

SETUP = """
import asyncio
import agentnb as an
from agentnb import checks
from agentnb.evals import derive_seed

class Terse(an.models.Model):
    # answers with the city's weather; told to be terse, it drops it on odd seeds
    name, streaming = "terse-stand-in", False

    def __init__(self, seed=0, delay=0.0):
        self.seed, self.delay = seed, delay

    def with_seed(self, seed):
        return Terse(seed, self.delay)

    async def complete(self, request):
        await asyncio.sleep(self.delay)
        system = request.messages[0]["content"]
        city = request.messages[-1]["content"].split()[0]
        if "terse" in system and self.seed % 2:
            return an.models.base.coerce_response("OK.", self.name)
        lines = [f"{city}: sunny, 12°C."] + [f"Detail {i} about {city}." for i in range(5)]
        return an.models.base.coerce_response("\\n".join(lines), self.name)

# tasks that flip on repeat 1 only: an even seed for repeat 0, an odd one for repeat 1
names = [n for n in (f"city-{i}" for i in range(200))
         if derive_seed(0, n, 0) % 2 == 0 and derive_seed(0, n, 1) % 2 == 1][:3]
cities = ["Beijing", "Shanghai", "Hangzhou"]
tasks = an.TaskSet([an.Task(n, f"{c} weather?", checks=[checks.answer_contains("sunny")])
                    for n, c in zip(names, cities)])
polite = an.Agent("You are a weather assistant.\\nAnswer in full sentences.", model=Terse())
terse = polite.copy(instructions="You are a weather assistant.\\nAnswer terse.")
print("ready")
"""
GRID = "ev = await an.evaluate({'polite': polite, 'terse': terse}, tasks, repeats=2, progress=False)\nev.outputs()"
DIFF = "ev.compare('polite', 'terse')"
STOP = (
    "slow = an.evals.start({'polite': polite.copy(model=Terse(delay=0.4))}, tasks, repeats=4,"
    " concurrency=1)\nan.widgets.EvalMatrix(slow)"
)
PLAYGROUND = (
    "pg = an.widgets.Playground(polite, tasks, repeats=2)\nawait pg.run()\n"
    "await pg.run(instructions='You are a weather assistant.\\nAnswer terse.')\n"
    "print(pg.comparison.flips)\npg"
)
CELLS = [SETUP, GRID, DIFF, STOP, PLAYGROUND]


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "evals24.ipynb", CELLS) as notebook:
        yield notebook


def test_the_output_grid_shows_every_answer_with_failures_marked(nb):
    nb.run(1)
    out = nb.output(1)
    grid = out.locator("table.agentnb-outputs")
    grid.wait_for(timeout=30_000)
    assert grid.locator("tr").count() == 4  # header + 3 tasks
    assert grid.locator(".anb-output-fail").count() == 3  # terse, repeat 1 of each task
    summary = grid.locator("details summary").first
    body = grid.locator("details").first.locator("div").first
    assert not body.is_visible()
    summary.click()
    body.wait_for(state="visible", timeout=5_000)
    assert "Detail 4" in body.inner_text()
    nb.shot("evals24-output-grid", out)


def test_the_comparison_shows_the_highlighted_prompt_diff(nb):
    nb.run(2)
    out = nb.output(2)
    diff = out.locator(".agentnb-prompt-diff")
    diff.wait_for(timeout=30_000)
    marks = [m.inner_text() for m in diff.locator("mark").all()]
    assert "full sentences" in " ".join(marks) and "terse" in marks
    nb.shot("evals24-prompt-diff", out)


def test_stop_shows_stopped_and_marks_partial_cells(nb):
    nb.run(3)
    out = nb.output(3)
    out.locator(".anb-m-table").wait_for(timeout=30_000)
    out.locator(".anb-m-cell:not(.anb-m-todo)").first.wait_for(timeout=30_000)
    out.get_by_role("button", name="■ Stop").click()
    count = out.locator(".anb-m-count", has_text="stopped")
    count.wait_for(timeout=10_000)
    text = count.inner_text()
    assert text.startswith("stopped · ") and "/12 runs (partial)" in text, text
    assert out.locator(".anb-m-partial").count() >= 1
    assert "…" not in out.locator(".anb-m-table").inner_text()
    caption = out.locator(".anb-m-summary caption").inner_text()
    assert caption.startswith("PARTIAL: stopped after")
    nb.shot("evals24-stopped", out)


def test_the_playground_diffs_the_repeat_that_flipped(nb):
    nb.run(4)
    out = nb.output(4)
    assert "', 1, 'pass', 'fail')" in nb.stdout(4)  # every flip is on repeat 1
    button = out.get_by_role("button", name="trajectory diff (repeat 1, where it flipped)")
    button.first.wait_for(timeout=30_000)
    prompt = out.locator(".anb-pg-promptdiff")
    assert "terse" in [m.inner_text() for m in prompt.locator("mark").all()]
    button.first.click()
    table = out.locator(".anb-t-table")
    table.wait_for(timeout=30_000)
    heads = [h.inner_text() for h in table.locator("tr").first.locator("th").all()]
    assert heads[1:] == ["v0 #1", "v1 #1"], heads
    nb.shot("evals24-playground-flipped-repeat", out)
