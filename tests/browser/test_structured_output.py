"""Notebook 21 in JupyterLab + Chromium: the answer format in the live view's request context
(the schema as sent, strict, the rewrite's notes), and the drifted answer, the runtime's
correction and the valid answer as cards (issue 40 item 6). Screenshots go to
.artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.browser.test_stand_in import index, open_and_run


@pytest.fixture(scope="module")
def nb21(lab, context):
    notebook, sources = open_and_run(lab, context, "21_structured_output.ipynb")
    yield notebook, sources
    notebook.page.close()


def test_21_runs_and_its_checks_pass(nb21):
    notebook, sources = nb21
    assert "all checks passed" in notebook.stdout(len(sources) - 1)


def test_21_the_view_shows_the_answer_format_and_the_correction(nb21):
    notebook, sources = nb21
    view = notebook.output(index(sources, 'session = an.Session(id="structured")'))
    view.locator(".anb-session").wait_for(timeout=30_000)
    cards = view.text_content() or ""  # the latest cards: the correction, the valid answer
    assert "Your answer was not valid because" in cards and "2025-01-10" in cards
    view.locator(".anb-scroll").evaluate("el => { el.scrollTop = 0; }")  # up to the context
    fmt = view.locator(".anb-output-format")
    fmt.wait_for(state="attached", timeout=30_000)  # inside the closed context card
    view.locator(".anb-context > summary").first.click()
    fmt.locator("summary").click()
    fmt.locator(".anb-json").first.wait_for(timeout=10_000)
    text = fmt.text_content() or ""
    assert "answer format: Itinerary" in text and "json_schema, strict" in text
    assert "optional 'currency' made required and nullable" in text
    assert '"$defs": {' in text and "show all" in text  # the schema as sent, folded
    fmt.scroll_into_view_if_needed()
    notebook.shot("structured-output-answer-format", view)
