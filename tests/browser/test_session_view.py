"""The live view in JupyterLab + Chromium: live growth, pairing, flags, inert markup, controls.

One notebook, its cells run one by one through ``window.jupyterapp``; assertions read the
DOM of each cell's output. Screenshots go to .artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.browser.lab import Notebook, opened

SETUP = '''
import asyncio, json
import agentnb as an
from agentnb.widgets import SessionView

def slow_agent(delay):
    """The travel assistant with a model that thinks for `delay` seconds per call."""
    inner = an.travel.TravelModel()
    async def think(request):
        await asyncio.sleep(delay)
        return await inner.complete(request)
    return an.travel.travel_agent(model=an.models.FunctionModel(think, name="slow-travel"))

REQUEST = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"
print("ready")
'''
LIVE = 'live = an.Session(id="live")\nview = SessionView(live, height=700)\nview'
START = 'task = asyncio.ensure_future(slow_agent(0.4).run(REQUEST, session=live))\nprint("started")'
FINISH = "result = await task\nprint(result.stop_reason, len(live), live.is_valid)"
HOSTILE = r"""
EVIL = '<img src=x onerror="window.__pwned=1">'
hostile = an.Session(id="hostile")
hostile.append({"role": "user", "content": EVIL + "<script>window.__pwned=2</script>"})
hostile.append({"role": "assistant", "content": None, "tool_calls": [
    {"id": "dup", "type": "function", "function": {"name": "search_flights" + EVIL,
     "arguments": '{"city": "<b>北京</b>\\" onmouseover=\\"window.__pwned=3"}'}},
    {"id": "dup", "type": "function", "function": {"name": "x'><svg onload=window.__pwned=8>",
     "arguments": "{not json"}}]})
hostile.append({"role": "tool", "tool_call_id": "dup", "name": "search_flights", "content": json.dumps(
    {"ok": False, "error": EVIL, "hint": "<a href='javascript:window.__pwned=4'>click</a>",
     "kind": "tool_error"})})
hostile.append({"role": "tool", "tool_call_id": "ghost", "name": "ghost",
                "content": "orphan <svg onload=window.__pwned=5>"})
hostile.append({"role": "assistant",
                "content": "[link](javascript:window.__pwned=6) <iframe src=javascript:window.__pwned=7>"})
SessionView(hostile)
"""
CONTROLS = 'ctl = an.Session(id="ctl")\nSessionView(ctl, agent=slow_agent(0.3))'
CONTROLS_CHECK = "print(len(ctl), ctl.is_valid, [r.stop_reason for r in ctl.runs])"
AGAIN = "view  # the same widget, a second (late) view of it"
CELLS = [SETUP, LIVE, START, FINISH, HOSTILE, CONTROLS, CONTROLS_CHECK, AGAIN]


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "view.ipynb", CELLS) as notebook:
        yield notebook


_COLLECT = """async (sc, sel) => {
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const seen = new Map();
  const grab = () => {
    for (const el of sc.querySelectorAll(sel)) seen.set(el.closest("[data-index]").dataset.index, el.textContent);
  };
  sc.scrollTop = 0;
  await frames();
  grab();
  while (sc.scrollTop + sc.clientHeight < sc.scrollHeight - 2) {
    sc.scrollTop += sc.clientHeight / 2;
    await frames();
    grab();
  }
  return [...seen.entries()];
}"""


def collect(view, selector: str) -> dict[str, str]:
    """Scroll the windowed list top to bottom; the text of every ``selector`` by index."""
    return dict(view.locator(".anb-scroll").evaluate(_COLLECT, selector))


def count(locator) -> int:
    """The message count the view's header shows (e.g. "12 messages · ...")."""
    text = locator.locator(".anb-counts").first.text_content() or ""
    m = re.match(r"([\d,]+) messages?", text)
    return int(m.group(1).replace(",", "")) if m else -1


def test_a_view_shown_before_a_run_grows_while_it_runs(nb):
    nb.run(1)
    view = nb.output(1).locator(".anb-session")
    view.wait_for(timeout=30_000)
    assert count(view) == 0
    nb.run(2)  # the run goes on in the background: this cell returns at once
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        n = count(view)
        if not seen or seen[-1] != n:
            seen.append(n)
            if len(seen) == 3:
                nb.shot("live-mid-run", view)
        if "stop_reason" in (view.locator(".anb-status-line").text_content() or ""):
            break
        time.sleep(0.05)
    nb.run(3)
    out = nb.stdout(3).split()
    assert out[0] == "final_answer" and out[2] == "True"
    final = int(out[1])
    assert count(view) == final == 10
    assert len(seen) >= 4 and seen == sorted(seen), seen  # it grew, step by step, live
    nb.shot("live-after-run", view)


def test_cards_pairing_context_and_final_answer(nb):
    view = nb.output(1).locator(".anb-session")
    assert count(view) == 10
    view.locator(".anb-scroll").evaluate("el => { el.scrollTop = 0; }")
    context = view.locator(".anb-context")
    assert "Request context" in context.text_content()
    assert context.get_attribute("open") is None  # collapsed
    context.locator("summary").first.click()
    for tool in ["search_flights", "search_weather", "search_hotels", "calculate_cost"]:
        assert tool in context.text_content()
    nb.shot("live-context", view)
    heads = collect(view, ".anb-call > .anb-result > .anb-head")
    assert sorted(heads) == ["2", "4", "6", "8"]  # every result nested under its call
    for head in heads.values():
        assert "ok" in head and " ms" in head
    view.locator(".anb-latest").click()
    final = view.locator(".anb-final")
    assert "final answer" in final.text_content() and "MU5101" in final.text_content()
    assert "it 5" in final.text_content() and "tok" in final.text_content()
    assert view.locator(".anb-warnings").count() == 0
    assert "✓ valid" in view.locator(".anb-counts").text_content()
    view.get_by_role("button", name="legend").click()
    assert "iteration" in view.locator(".anb-legend").text_content()
    nb.shot("live-cards", view)
    # Only the final answer is new since the last model call; the divider says so.
    assert view.locator(".anb-divider").text_content() == "new since model call 5"
    assert view.locator(".anb-new").count() == 1 and final.locator(".anb-new").count() == 1
    # Raw JSON of one card, copy it, then search and the filters.
    view.locator(".anb-final .anb-raw-btn").click()
    assert '"role": "assistant"' in view.locator(".anb-final .anb-raw").text_content()
    view.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    view.locator(".anb-final .anb-copy").click()
    copied = json.loads(view.page.evaluate("() => navigator.clipboard.readText()"))
    assert copied["role"] == "assistant" and "MU5101" in copied["content"]
    view.locator(".anb-filter-tool").select_option("search_weather")
    view.page.wait_for_timeout(300)
    assert view.locator(".anb-shown").text_content() == "1 shown"
    view.locator(".anb-filter-tool").select_option("")
    view.locator(".anb-search").fill("search_weather")
    view.page.wait_for_timeout(300)
    assert "shown" in view.locator(".anb-shown").text_content()
    view.locator(".anb-search").fill("")
    view.locator(".anb-filter-role").select_option("tool")
    view.page.wait_for_timeout(300)
    assert view.locator(".anb-shown").text_content().startswith("4 shown")
    view.locator(".anb-filter-role").select_option("")


def test_a_late_view_of_the_same_widget_shows_everything(nb):
    nb.run(7)
    again = nb.output(7).locator(".anb-session")
    again.wait_for(timeout=30_000)
    nb.page.wait_for_function(
        "(el) => /^10 messages/.test(el.querySelector('.anb-counts').textContent)",
        arg=again.element_handle(),
        timeout=15_000,
    )
    assert sorted(collect(again, ".anb-call > .anb-result")) == ["2", "4", "6", "8"]


def test_a_reloaded_page_catches_up_from_the_kernel(nb):
    page = nb.page
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_timeout(500)
    page.reload()
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.content.widgets.length > 1",
        timeout=60_000,
    )
    view = nb.output(1).locator(".anb-session")
    view.wait_for(timeout=60_000)
    page.wait_for_function(
        "(el) => /^10 messages/.test(el.querySelector('.anb-counts').textContent)",
        arg=view.element_handle(),
        timeout=30_000,
    )
    assert "stop_reason: final_answer" in view.locator(".anb-status-line").text_content()
    nb.shot("reloaded", view)


def test_inspectors_are_reachable_from_the_view(nb):
    view = nb.output(1).locator(".anb-session")
    view.locator(".anb-tab[data-tab=requests]").click()
    view.locator(".anb-call-btn", has_text="#1").click()
    view.locator(".anb-budget-bar").wait_for(timeout=15_000)
    body = view.locator(".anb-inspector").text_content()
    assert "Request of model call 1 of 5" in body and "search_flights" in body
    nb.shot("inspector-request", view)
    view.locator(".anb-diff-btn").click()
    view.locator(".anb-diff-appended").first.wait_for(timeout=15_000)
    assert "What changed from model call 4 to 5" in view.locator(".anb-inspector").text_content()
    view.locator(".anb-tab[data-tab=timeline]").click()
    rows = view.locator(".anb-ev")
    assert rows.count() > 30
    rows.nth(3).click()
    assert '"type"' in view.locator(".anb-event-detail").text_content()
    nb.shot("timeline", view)
    view.locator(".anb-tab[data-tab=messages]").click()


def test_hostile_markup_is_inert_everywhere(nb):
    nb.run(4)
    view = nb.output(4).locator(".anb-session")
    view.wait_for(timeout=30_000)
    nb.page.wait_for_timeout(800)
    page = nb.page
    assert page.evaluate("() => window.__pwned") is None
    bad = "img, script, iframe, svg, a, [onerror], [onload], [onmouseover], [href], [src]"
    cards = view.locator(".anb-scroll")
    assert cards.locator(bad).count() == 0
    text = cards.text_content()
    assert '<img src=x onerror="window.__pwned=1">' in text and "<script>" in text
    assert "javascript:window.__pwned=6" in text and "<iframe" in text
    assert "x'><svg onload=window.__pwned=8>" in text
    warnings = " ".join(view.locator(".anb-warnings li").all_text_contents())
    assert "two tool calls share the id" in warnings
    assert "orphan" in warnings and "error result (tool_error)" in warnings
    assert "not valid JSON" in warnings
    # Open every fold and every raw view: still nothing runs.
    for button in view.locator(".anb-raw-btn").all():
        button.click()
    for button in view.locator(".anb-more").all():
        button.click()
    view.locator(".anb-warnings").first.hover()
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.__pwned") is None
    assert cards.locator(bad).count() == 0
    nb.shot("hostile", view)


def status(view) -> str:
    return view.locator(".anb-status-line").text_content() or ""


def wait_status(view, pattern: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = status(view)
        if re.search(pattern, s):
            return s
        time.sleep(0.05)
    raise AssertionError(f"status never matched {pattern!r}: {status(view)!r}")


def test_controls_step_run_stop_reset(nb):
    nb.run(5)
    view = nb.output(5).locator(".anb-session")
    view.wait_for(timeout=30_000)
    view.locator(".anb-input").fill("我周五从上海去北京出差，预算3000以内")
    view.locator(".anb-step").click()
    wait_status(view, r"paused.*next: assemble")
    assert count(view) == 1
    view.locator(".anb-step").click()
    wait_status(view, r"paused.*next: call_model")
    view.locator(".anb-run").click()
    wait_status(view, r"running")
    deadline = time.monotonic() + 20
    while count(view) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    view.locator(".anb-stop").click()
    wait_status(view, r"stop_reason: cancelled")
    assert "✓ valid" in view.locator(".anb-counts").text_content()  # calls answered
    nb.shot("controls-stopped", view)
    view.locator(".anb-reset").click()
    wait_status(view, r"^idle")
    assert count(view) == 0
    view.locator(".anb-run").click()
    wait_status(view, r"stop_reason: final_answer")
    assert count(view) == 10
    assert view.locator(".anb-final").count() == 1
    nb.shot("controls-final", view)
    nb.run(6)
    assert nb.stdout(6).strip() == "10 True ['cancelled', 'final_answer']"


def test_the_quickstart_notebook_runs_in_lab_with_its_views(lab, context):
    import shutil

    from tests.browser.lab import ROOT

    shutil.copy(ROOT / "notebooks" / "00_quickstart.ipynb", lab.root / "quickstart.ipynb")
    page = context.new_page()
    try:
        nb = Notebook(page, lab, "quickstart.ipynb")
        cells = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
        for i in range(cells):
            if (
                page.evaluate(
                    "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.type", i
                )
                == "code"
            ):
                nb.run(i)
        assert "all checks passed" in nb.stdout(cells - 1)
        views = page.locator(".anb-session")
        assert views.count() >= 2
        assert page.locator(".anb-request .anb-budget-bar").count() == 1
        assert page.locator(".anb-diff .anb-diff-appended").count() == 2
        assert page.locator(".anb-timeline .anb-ev").count() > 30
        first = views.first
        first.scroll_into_view_if_needed()
        assert re.match(r"10 messages", first.locator(".anb-counts").text_content())
        nb.shot("quickstart-view", first)
    finally:
        page.close()
