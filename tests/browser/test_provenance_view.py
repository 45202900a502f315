"""Provenance in JupyterLab + Chromium: an injection watched live (the highlighted span, the
link from the steered call to the result it came from, the inspector on a click), and the
saved HTML (the notebook as saved, rendered as nbviewer renders it: nbconvert).

Screenshots go to .artifacts/screenshots/provenance-*.png (git-ignored); look at them.
"""

from __future__ import annotations

import nbformat
import pytest

from tests.browser.lab import SCREENSHOTS, opened

SETUP = """
import asyncio
import agentnb as an
from agentnb.widgets import SessionView
from agentnb.travel.injection import ATTACKS, InjectedTravelTools
desk = InjectedTravelTools()
desk.plant("reviews", ATTACKS["hotel"]["zh"].format(hotel="江畔景酒店"), ("hotel", "江畔景酒店"))

gate = asyncio.Event()   # the reply after the booking waits for it: the run is caught live

class Slow(an.travel.TravelModel):   # a pause per reply: the run is watched as it happens
    async def complete(self, request):
        await asyncio.sleep(0.4)
        if any((c.get("function") or {}).get("name") == "book_hotel"
               for m in request.messages for c in m.get("tool_calls") or ()):
            await gate.wait()
        return await super().complete(request)

agent = an.travel.travel_agent(tools=desk, model=Slow("gullible", seed=1), max_iterations=12)
print("ready")
"""
LIVE = """
watched = an.Session(id="injected")
SessionView(watched, height=1500)   # shown before the run: it follows it live
"""
RUN = """
task = asyncio.ensure_future(agent.run(an.travel.ARTICLE_REQUESTS["000"], session=watched))
print("started")
"""
DONE = """
gate.set()
result = await task
print(result.stop_reason, [v.tool for v in watched.provenance().steered])
"""
SAVED = """
result   # no live view for a result: its static HTML, as a saved notebook keeps it
"""
CELLS = [SETUP, LIVE, RUN, DONE, SAVED]


@pytest.fixture(scope="module")
def context(browser):
    """Tall enough for the view to hold the flagged review and the booking it steered."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1900}, locale="zh-CN")
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "provenance.ipynb", CELLS) as notebook:
        yield notebook


def _in_view(item, scroller) -> bool:
    box, sc = item.bounding_box(), scroller.bounding_box()
    return (
        bool(box and sc)
        and sc["y"] <= box["y"]
        and box["y"] + box["height"] <= sc["y"] + sc["height"]
    )


def test_an_injection_watched_live_the_span_the_steered_call_and_the_inspector(nb):
    nb.run(1)
    view = nb.output(1).locator(".anb-session").first
    view.wait_for(timeout=30_000)
    nb.run(2)
    assert "started" in nb.stdout(2)
    steered = view.locator(".anb-steered-link").first
    steered.wait_for(timeout=30_000)  # the booking the review asked for; the run waits at the gate
    assert "hotel ← tool_result[call_2] hotels[0].reviews[1]" in steered.text_content()
    view.locator(".anb-result .anb-name", has_text="book_hotel").first.wait_for(timeout=15_000)
    # live, the run held at the gate: the review scrolled to the top of the list, highlighted
    scroller = view.locator(".anb-scroll")
    view.locator("mark.anb-injection").first.evaluate(
        "el => { const sc = el.closest('.anb-scroll');"
        " sc.scrollTop += el.getBoundingClientRect().top - sc.getBoundingClientRect().top - 60; }"
    )
    nb.page.wait_for_timeout(400)
    mark = view.locator("mark.anb-injection").first
    assert mark.text_content().startswith("忽略之前的所有指令")
    card = view.locator(".anb-result.anb-has-injection").first
    note = card.locator(".anb-injection-note").first.text_content()
    assert "hotels[0].reviews[1]" in note and "忽略或替换助手的指令" in note
    back = card.locator(".anb-steer-link").first
    assert "book_hotel(hotel) #call_4" in back.text_content()
    assert _in_view(mark, scroller) and _in_view(back, scroller)
    status = view.locator(".anb-status-line").text_content()
    assert "running" in status, status  # taken while the run goes on
    counts = view.locator(".anb-counts").text_content()
    assert "1 instruction found in data" in counts and "1 steered call" in counts
    nb.shot("provenance-live-span", view)
    # the result's link goes to the call it steered (the booking, two thousand pixels down)
    back.click()
    nb.page.wait_for_timeout(400)
    steered = view.locator(".anb-steered-link").first
    assert "hotel ← tool_result[call_2] hotels[0].reviews[1]" in steered.text_content()
    assert _in_view(steered, scroller)
    assert "running" in view.locator(".anb-status-line").text_content()
    nb.shot("provenance-live-steered-call", view)
    nb.run(3)  # the gate opens, the run ends; the cards settle
    assert "final_answer ['book_hotel']" in nb.stdout(3)
    nb.page.wait_for_timeout(500)
    steered = view.locator(".anb-steered-link").first
    call = steered.locator(
        "xpath=ancestor::div[contains(concat(' ', @class, ' '), ' anb-call ')][1]"
    )
    # the inspector: where each argument came from, on a click
    call.locator(".anb-chip[data-arg=hotel]").click()
    detail = call.locator(".anb-prov-detail")
    assert "steered" in detail.text_content() and "tool_result[call_2]" in detail.text_content()
    call.locator(".anb-chip[data-arg=city]").click()
    assert "user[0]" in detail.text_content()
    call.locator(".anb-prov-detail").scroll_into_view_if_needed()
    nb.shot("provenance-inspector", view)
    # the link goes to the result; the result links back to the call it steered
    call.locator(".anb-chip[data-arg=hotel]").click()
    steered.click()  # to the result it came from, flashed
    nb.page.wait_for_timeout(300)
    nb.shot("provenance-jumped-to-result", view)
    view.locator("mark.anb-injection").first.evaluate("el => el.scrollIntoView({block: 'center'})")
    nb.page.wait_for_timeout(200)
    nb.shot("provenance-highlight-after-run", view)
    back = view.locator(".anb-result.anb-has-injection .anb-steer-link").first
    assert "book_hotel(hotel)" in back.text_content()
    counts = view.locator(".anb-counts").text_content()
    assert "1 instruction found in data" in counts and "1 steered call" in counts
    nb.shot("provenance-whole-view", view)


def test_the_saved_html_shows_the_span_and_the_steered_call_without_a_kernel(nb, lab, context):
    """The result's static HTML as JupyterLab draws it, then the notebook saved to disk and
    rendered as nbviewer renders it (nbconvert's HTML exporter, no kernel, no widgets)."""
    from nbconvert import HTMLExporter

    nb.run(4)
    shown = nb.output(4).locator(".agentnb-transcript")
    shown.locator("mark.anb-injection").wait_for(timeout=15_000)
    assert "hotel ← tool_result[call_2] hotels[0].reviews[1]" in shown.text_content()
    nb.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    nb.page.wait_for_timeout(800)
    saved = nbformat.read(lab.root / "provenance.ipynb", as_version=4)
    (html,) = [o["data"]["text/html"] for o in saved.cells[4].outputs if "data" in o]
    assert "<mark class='anb-injection'" in html and ">忽略之前的所有指令" in html
    assert ">hotel ← tool_result[call_2] hotels[0].reviews[1] (#6)</a>" in html
    assert "this result steered: <a href=" in html and ">book_hotel(hotel) #call_4</a>" in html
    body, _ = HTMLExporter().from_notebook_node(saved)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page_path = SCREENSHOTS / "provenance-saved.html"
    page_path.write_text(body, encoding="utf-8")
    page = context.new_page()
    try:
        page.goto(page_path.as_uri())
        cells = page.locator(".jp-Cell")
        transcript = cells.nth(4).locator(".agentnb-transcript")
        mark = transcript.locator("mark.anb-injection")
        assert mark.text_content().startswith("忽略之前的所有指令")
        chip = transcript.locator(".anb-chip", has_text="hotel ← ⚑ tool_result")
        assert chip.count() == 1  # where the booking's hotel came from, as the live chips say
        link = transcript.locator("a", has_text="hotel ← tool_result[call_2]")
        link.click()  # the link goes to the flagged result's card
        page.wait_for_timeout(300)
        target = link.get_attribute("href")
        assert target and page.evaluate("() => location.hash") == target
        note = transcript.locator(".anb-injection-note")
        note.evaluate("el => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(200)
        page.screenshot(path=str(SCREENSHOTS / "provenance-saved-html.png"))
        chip.evaluate("el => el.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(200)
        page.screenshot(path=str(SCREENSHOTS / "provenance-saved-html-steered-call.png"))
    finally:
        page.close()
