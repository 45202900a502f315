"""A 5,000-message session opens fast and scrolls with a bounded DOM (real Chromium)."""

from __future__ import annotations

from tests.browser.perf import measure


def test_five_thousand_messages_open_and_scroll_with_a_bounded_dom(lab, context):
    page = context.new_page()
    try:
        m = measure(page, lab, 5000)
    finally:
        page.close()
    print(m)
    assert m["header"].startswith("5,000 messages") and "✓ valid" in m["header"]
    assert m["max_cards"] <= 120 and m["max_nodes"] < 4000  # bounded, whatever the length
    assert m["first"][0] == "ctx" and int(m["last"][1]) == 4999
    assert 2000 < int(m["middle"][0]) < 3000  # the middle of the list is drawn there
    assert m["first_render_ms"] < 5000  # the bench reports the figure; this is a sanity bound
    assert m["p95_frame_ms"] < 250
    assert m["search_shown"] == "1 shown"
