"""An evaluation in real JupyterLab: a sweep in a cell, and a saved one reloaded with no model.

Until agentnb.widgets has the live matrix (EvalMatrix) an evaluation shows as its static
table; with it, the matrix. Either way the task × variant grid must show in the page.
"""

from __future__ import annotations

from tests.browser.lab import Notebook


def test_a_reloaded_evaluation_shows_its_grid_with_no_model(lab, context, tmp_path):
    saved = tmp_path / "ev.jsonl"
    name = lab.write_notebook("evaluation_view.ipynb", [
        "import agentnb as an\n"
        "agent = an.travel.travel_agent()\n"
        "loop = agent.copy(model=an.travel.TravelModel('loop'))\n"
        "ev = await an.evaluate({'article': agent, 'loop': loop}, an.travel.task_set())\n"
        f"ev.save({str(saved)!r}); print(ev)",
        f"back = an.Evaluation.load({str(saved)!r})\nprint(back.agents, back.done)\nback",
    ])  # fmt: skip
    page = context.new_page()
    nb = Notebook(page, lab, name)
    nb.run(0)
    assert "78/78 runs done" in nb.stdout(0)
    nb.run(1)
    assert "{} True" in nb.stdout(1)  # no agent, no model: loaded from the file alone
    area = nb.output(1)
    area.locator("table").first.wait_for(timeout=30_000)
    text = area.inner_text()
    for task in ("article-000", "over-budget-1300", "follow-saturday-en"):
        assert task in text
    assert "loop" in text and "article" in text
    nb.shot("evaluation_reloaded", area)
    page.close()
