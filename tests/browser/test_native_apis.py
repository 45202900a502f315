"""Notebook 20 in JupyterLab + Chromium: the reasoning fold of a native API's reply shows the
reasoning text, and its opaque part as "kept for the provider" (named and measured, never its
content); a previous_response_id reply says what its call sent and what the server held.
Screenshots go to .artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import re

import pytest

from tests.browser.test_stand_in import index, open_and_run


@pytest.fixture(scope="module")
def nb20(lab, context):
    notebook, sources = open_and_run(lab, context, "20_native_apis.ipynb")
    yield notebook, sources
    notebook.page.close()


def test_20_runs_to_its_checks(nb20):
    notebook, sources = nb20
    assert "all checks passed" in notebook.stdout(len(sources) - 1)


def test_20_the_reasoning_fold_shows_what_is_kept_for_the_provider(nb20):
    """The Anthropic session's view, live: by the end of the notebook it was continued on the
    Responses API ('A session moved to another API'), so its latest cards (the ones a bounded
    view keeps in the DOM) carry Responses reasoning items; every opaque part is named and
    measured, never shown."""
    notebook, sources = nb20
    view = notebook.output(index(sources, 'for api in ("responses", "anthropic")'))
    kept = view.locator(".anb-role-assistant .anb-reasoning .anb-kept")
    kept.first.wait_for(timeout=30_000)
    texts = kept.all_text_contents()
    named = re.compile(
        r"kept for the provider: (Anthropic thinking \(signature, 44 chars\)"
        r"|Responses API reasoning \(encrypted_content, \d+ chars\))"
    )
    assert texts and all(named.fullmatch(t) for t in texts), texts
    reasoning = view.locator(".anb-reasoning", has_text="kept for the provider").last
    assert "[today] 今天是 2025-01-06（周一）" in (reasoning.text_content() or "")
    assert "WyJyc18" not in (view.text_content() or "")  # the sealed items ([\"rs_...) never shown
    reasoning.scroll_into_view_if_needed()
    notebook.shot("native-apis-kept-for-the-provider", view)


def test_20_a_stored_reply_says_what_was_sent_and_held(nb20):
    notebook, sources = nb20
    view = notebook.output(index(sources, 'stored = an.Session(id="trip-stored")'))
    held = view.locator(".anb-kept", has_text="server-side state")
    held.first.wait_for(timeout=30_000)
    text = held.first.text_content() or ""
    assert text.startswith("server-side state: sent 2 of 4 messages; the server held the rest")
    assert "previous_response_id resp_" in text
    held.first.scroll_into_view_if_needed()
    notebook.shot("native-apis-server-side-state", view)
