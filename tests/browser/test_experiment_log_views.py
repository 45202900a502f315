"""Issue 41's views in JupyterLab + Chromium: a label set in the output grid (a note and a
click) survives a fresh kernel, read back from the experiment log; the log's view lists the
experiments, filters them and opens two side by side. Screenshots go to .artifacts/screenshots/."""

from __future__ import annotations

import re

from tests.browser.lab import opened

TOY = """
import agentnb as an

def reply(request, seed=None):
    system, city = request.messages[0]["content"], request.messages[-1]["content"].split()[0]
    if "terse" in system:
        return "OK." if (seed or 0) % 2 else f"{city}: sunny."
    return f"{city}: sunny, 12°C.\\nTake sunglasses."

polite = an.Agent("You are a weather assistant.\\nAnswer in full sentences.",
                  model=an.models.FunctionModel(reply, name="weather-toy"))
terse = polite.copy(instructions="You are a weather assistant.\\nAnswer terse.")
tasks = an.TaskSet([an.Task(f"city-{i}", f"{c} weather?", checks=[an.checks.answer_contains("sunny")])
                    for i, c in enumerate(["Beijing", "Shanghai", "Hangzhou", "Chengdu"])])
log = an.evals.ExperimentLog("experiments.sqlite")
"""
SETUP = (
    TOY
    + """
monday = await an.evaluate({"polite": polite}, tasks, log=log, note="monday", progress=False)
tuesday = await an.evaluate({"terse": terse}, tasks, log=log, note="tuesday", progress=False)
ev = await an.evaluate({"polite": polite, "terse": terse}, tasks, log=log, note="both", progress=False)
print("ready", ev.experiment.id)
"""
)
FIRST = [SETUP, "ev.outputs()", "print(ev.labels.to_dict('records'))"]


def test_a_label_set_in_the_grid_survives_a_fresh_kernel(lab, context):
    with opened(lab, context, "labels41.ipynb", FIRST) as nb:
        eid = re.search(r"ready (e-[0-9a-f]+)", nb.stdout(0)).group(1)
        nb.run(1)
        grid = nb.output(1).locator("table.agentnb-outputs")
        grid.wait_for(timeout=30_000)
        row = grid.locator("tr", has=nb.page.locator("th", has_text="city-2"))
        run = row.locator("td").nth(1).locator(".anb-output").first  # terse, repeat 0
        run.locator("input.anb-label-note").fill("no temperature, just sunny")
        run.get_by_role("button", name="✗ bad").click()
        shown = run.locator(".anb-label")
        shown.get_by_text("human: ✗ fail — no temperature, just sunny").wait_for(timeout=15_000)
        nb.shot("issue41-grid-label", nb.output(1))
        nb.run(2)
        assert "'verdict': 'fail', 'note': 'no temperature, just sunny'" in nb.stdout(2)
    fresh = [
        "import agentnb as an\nprint('ready')",
        f"again = an.evals.experiment({eid!r}, 'experiments.sqlite')\n"
        "print(again.labels[['variant', 'task', 'verdict', 'note']].values.tolist())\nagain.outputs()",
    ]
    with opened(lab, context, "labels41-fresh.ipynb", fresh) as nb:
        nb.run(1)
        assert "[['terse', 'city-2', 'fail', 'no temperature, just sunny']]" in nb.stdout(1)
        grid = nb.output(1).locator("table.agentnb-outputs")
        grid.wait_for(timeout=30_000)
        label = grid.locator("div.anb-label-fail")
        assert label.count() == 1 and "no temperature" in label.inner_text()
        nb.shot("issue41-grid-label-fresh-kernel", nb.output(1))


def test_the_log_view_filters_and_opens_two_side_by_side(lab, context):
    cells = [TOY + "print('ready')", "log"]
    with opened(lab, context, "log41.ipynb", cells) as nb:
        nb.run(1)
        out = nb.output(1)
        table = out.locator(".anb-log-table")
        table.wait_for(timeout=30_000)
        rows = out.locator("tr.anb-log-row")
        assert rows.count() >= 3, rows.count()
        nb.shot("issue41-log-view", out)
        out.locator("input.anb-log-filter").fill("tuesday")
        assert rows.count() == 1
        out.locator("input.anb-log-filter").fill("")
        ids = [r.locator("td").nth(1).inner_text() for r in rows.all()]
        monday = next(i for i, r in zip(ids, rows.all(), strict=True) if "monday" in r.inner_text())
        tuesday = next(
            i for i, r in zip(ids, rows.all(), strict=True) if "tuesday" in r.inner_text()
        )
        out.locator(f"input.anb-log-pick[data-id='{monday}']").check()
        out.locator(f"input.anb-log-pick[data-id='{tuesday}']").check()
        out.get_by_role("button", name="Open side by side").click()
        verdict = out.locator(".anb-log-verdict")
        verdict.wait_for(timeout=30_000)
        assert verdict.inner_text().startswith("no evidence of a difference (terse better on 0")
        heading = out.locator(".anb-log-side .anb-sub").first.inner_text()
        assert heading == f"terse ({tuesday}) against polite ({monday})", heading
        marks = [m.inner_text() for m in out.locator(".anb-pg-promptdiff mark").all()]
        assert "terse" in " ".join(marks), marks
        side = out.locator(".anb-log-side table.agentnb-outputs")
        assert side.locator("tr").count() == 5  # header + 4 tasks
        nb.shot("issue41-log-side-by-side", out)
