"""The glass box in JupyterLab + Chromium: edits, one driver, grounding, side by side, loops.

Screenshots go to .artifacts/screenshots/glass-*.png (git-ignored); look at them.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.browser.lab import opened

SETUP = """
import asyncio, json
import ipywidgets
import agentnb as an
from agentnb.widgets import SessionView
REQUEST = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"
print("ready")
"""
EDITED = """
edited = an.Session(id="edited")
SessionView(edited, height=600)
"""
EDIT = """
await an.travel.travel_agent().run(REQUEST, session=edited)
call_id = edited.messages[1].tool_calls[0].id
body = json.loads(edited.messages[2].text)
body["flights"][0]["price"] = 450
edited.edit_result(call_id, body)
await an.travel.travel_agent().run("那最便宜的航班多少钱？", session=edited)
print(len(edited.requests))
"""
STEPPED = """
stepped = an.Session(id="stepped")
agent = an.travel.travel_agent()
run = agent.start(REQUEST, session=stepped)
for _ in range(4):   # restore, assemble, call_model, decide: paused before execute_tools
    await run.step()
SessionView(stepped, agent=agent, height=420)
"""
STEPPED_CHECK = "print(run.done, run.stop_reason, len(stepped.runs), stepped.is_valid)"
FABRICATED = """
fab = an.Session(id="fabricated")
await an.Agent(model=an.travel.TravelModel(misbehave="fabricate")).run(REQUEST, session=fab)
SessionView(fab, height=300)
"""
SIDE = """
left, right = an.Session(id="left"), an.Session(id="right")
await an.travel.travel_agent().run(REQUEST, session=left)
views = [SessionView(s, agent=an.travel.travel_agent(), height=300) for s in (left, right)]
for v in views:
    v.layout.width = "50%"
ipywidgets.HBox(views)
"""
LOOP = """
loop = an.Session(id="loop")
looping = an.travel.travel_agent(model=an.travel.TravelModel(misbehave="loop"),
                                 repeat_limit=0, max_iterations=12)
loop_view = SessionView(loop, height=500)   # made before the run: it follows it
result = await looping.run(REQUEST, session=loop)
print(result.stop_reason, len(loop))
loop_view
"""
SUB = """
if hasattr(an.Agent, "as_tool"):
    from agentnb.tools import tool
    @tool
    def search_weather(city: str, date: str) -> dict:
        \"\"\"天气.\"\"\"
        return {"city": city, "date": date, "rain_probability": 0.8}
    weather = an.Agent("你只查天气。", tools=[search_weather], name="weather", model=an.models.ScriptedModel([
        {"role": "assistant", "content": None, "tool_calls": [{"id": "w1", "type": "function",
         "function": {"name": "search_weather", "arguments": '{"city": "示例城A", "date": "2025-05-01"}'}}]},
        {"role": "assistant", "content": "示例城A 降雨概率 0.8，带伞"}]))
    boss = an.Agent("旅行助手", tools=[weather.as_tool("ask_weather", "天气子任务")],
                    model=an.models.ScriptedModel([
        {"role": "assistant", "content": None, "tool_calls": [{"id": "p1", "type": "function",
         "function": {"name": "ask_weather", "arguments": '{"task": "示例城A 五一会下雨吗？"}'}}]},
        {"role": "assistant", "content": "要带伞"}]))
    parent = an.Session(id="parent")
    parent_view = SessionView(parent, height=500)
    await boss.run("五一去示例城A要带伞吗", session=parent)
    print("sub-agent")
else:
    parent_view = None
    print("no as_tool")
parent_view
"""
TRACEBACK = """
import dataclasses
print("traceback" in {f.name for f in dataclasses.fields(an.events.ToolFinished)})

@an.tool
def divide(a: int, b: int) -> float:
    \"\"\"Divide a by b.\"\"\"
    return a / b

calc = an.Agent("calc", tools=[divide], model=an.models.ScriptedModel([
    {"role": "assistant", "content": None, "tool_calls": [{"id": "d1", "type": "function",
     "function": {"name": "divide", "arguments": '{"a": 1, "b": 0}'}}]},
    {"role": "assistant", "content": "cannot divide by zero"}]))
failing = an.Session(id="failing")
failing_view = SessionView(failing, height=400)
await calc.run("1/0?", session=failing)
failing_view
"""
BUDGET = """
long = an.Session(id="long")
await an.travel.travel_agent().run(REQUEST, session=long)   # ~1,000 tokens of history
small = an.travel.travel_agent(context_window=1500, reply_reserve=300)
await small.run("北京下周四的天气怎么样？", session=long)
print(long.requests[-2].note)
an.widgets.RequestInspector(long, -2)   # the small agent's first call
"""
CELLS = [
    SETUP,
    EDITED,
    EDIT,
    STEPPED,
    STEPPED_CHECK,
    FABRICATED,
    SIDE,
    LOOP,
    SUB,
    TRACEBACK,
    BUDGET,
]


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "glass.ipynb", CELLS) as notebook:
        yield notebook


def view_of(nb, i):
    view = nb.output(i).locator(".anb-session").first
    view.wait_for(timeout=30_000)
    nb.page.wait_for_timeout(500)
    return view


def status(view) -> str:
    return view.locator(".anb-status-line").text_content() or ""


def wait_status(view, pattern: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if re.search(pattern, s := status(view)):
            return s
        time.sleep(0.05)
    raise AssertionError(f"status never matched {pattern!r}: {status(view)!r}")


def test_an_edited_result_card_its_mark_the_timeline_and_the_diff(nb):
    nb.run(1)
    view = view_of(nb, 1)
    nb.run(2)
    nb.page.wait_for_timeout(800)
    sc = view.locator(".anb-scroll")
    sc.evaluate("el => { el.scrollTop = 0; }")
    nb.page.wait_for_timeout(300)
    card = view.locator(".anb-result.anb-was-edited").first
    card.wait_for(timeout=10_000)
    head = card.locator(".anb-head").text_content()
    assert "✎ edited" in head and "tool said: ok" in head
    note = card.locator(".anb-edited-note")
    assert (
        "edit_result" in note.text_content() and "content.flights[0].price" in note.text_content()
    )
    note.locator("summary").click()
    assert card.locator(".anb-now .anb-changed").first.text_content().strip() == '"price": 450,'
    assert '"price": 880' in card.locator(".anb-old .anb-changed").first.text_content()
    card.locator(".anb-raw-btn").click()
    raw = card.locator(".anb-raw-box").text_content()
    assert "✎ edited (event #" in raw and "before the edit:" in raw
    card.scroll_into_view_if_needed()
    nb.shot("glass-edited-card", view)
    # The timeline lists the edit.
    view.locator(".anb-tab[data-tab=timeline]").click()
    row = view.locator(".anb-ev", has_text="SessionEdited")
    assert row.count() == 1
    assert "edit_result #2" in row.text_content()
    row.scroll_into_view_if_needed()
    row.click()
    nb.shot("glass-timeline-edit", view)
    # The diff of the two requests that straddle the edit attributes it to the edit.
    view.locator(".anb-tab[data-tab=requests]").click()
    view.locator(".anb-call-btn", has_text="#6").click()  # the first call after the edit
    view.locator(".anb-diff-prev").click()  # compared with the last one before it
    edited = view.locator(".anb-diff-edited.anb-diff-by-edit")
    edited.wait_for(timeout=10_000)
    assert "edited by hand (edit_result" in edited.text_content()
    assert "not the tool's own output" in edited.text_content()
    assert edited.locator(".anb-changed").first.text_content().strip() == '"price": 450,'
    text = edited.text_content()
    assert '"arrival_time": "10:15",' in text  # structural: pretty JSON, not escaped strings
    assert "unchanged lines" in text  # unchanged stretches fold, as in a diff
    edited.locator(".anb-gap").first.click()
    assert '"flight_no": "MU5101"' in edited.text_content()
    edited.scroll_into_view_if_needed()
    nb.shot("glass-diff-edit", edited)
    view.locator(".anb-tab[data-tab=messages]").click()


def test_a_code_stepped_run_reads_paused_and_continues_from_the_views_run(nb):
    nb.run(3)
    view = view_of(nb, 3)
    s = wait_status(view, r"paused")
    assert "stage decide · iteration 1/6 · next: execute_tools" in s and "running" not in s
    pending = view.locator(".anb-pending").first.text_content()
    assert "paused" in pending and "waiting" not in pending
    counts = view.locator(".anb-counts").text_content()
    assert "✓ valid" in counts and "1 call in flight" in counts and "warning" not in counts
    nb.shot("glass-stepped-paused", view)
    view.locator(".anb-run").click()
    wait_status(view, r"stop_reason: final_answer")
    assert view.locator(".anb-errors .anb-error").count() == 0
    assert view.locator(".anb-final").count() == 1
    nb.shot("glass-stepped-continued", view)
    nb.run(4)
    assert nb.stdout(4).strip() == "True final_answer 1 True"


def test_a_fabricated_answer_is_flagged(nb):
    nb.run(5)
    view = view_of(nb, 5)
    view.locator(".anb-latest").click()
    final = view.locator(".anb-final")
    final.wait_for(timeout=10_000)
    marks = final.locator("mark.anb-ungrounded").all_text_contents()
    assert "CA1234" in marks and "650" in marks
    flag = view.locator(".anb-counts .anb-flag").text_content()
    n = int(re.search(r"⚑ (\d+) ungrounded figures", flag).group(1))
    assert n == len(set(marks)) and "✓ valid" in view.locator(".anb-counts").text_content()
    assert "in no tool result" in final.locator(".anb-ungrounded-note").text_content()
    nb.shot("glass-fabricated", view)


def test_two_views_side_by_side_do_not_clip(nb):
    nb.run(6)
    out = nb.output(6)
    out.locator(".anb-session").nth(1).wait_for(timeout=30_000)
    nb.page.wait_for_timeout(800)
    views = out.locator(".anb-session")
    assert views.count() == 2
    for k in range(2):
        view = views.nth(k)
        box = view.bounding_box()
        assert box["width"] < 700  # really half width
        for el in view.locator(".anb-ctl, .anb-tab, .anb-input").all():
            b = el.bounding_box()
            assert b["x"] >= box["x"] - 1 and b["x"] + b["width"] <= box["x"] + box["width"] + 1, (
                el.text_content(), b, box)  # fmt: skip
        overflow = view.evaluate("el => el.scrollWidth - el.clientWidth")
        assert overflow <= 1, overflow
    nb.shot("glass-side-by-side", out)


def test_a_runaway_loop_collapses_into_one_card_with_a_count(nb):
    nb.run(7)
    out = nb.stdout(7).split()
    assert out[0] == "max_iterations"
    view = view_of(nb, 7)
    # The last call was the wrap-up (final_answer_on_stop): not "iteration 13/12".
    assert "wrap-up after 12 iterations" in status(view) and "13/12" not in status(view)
    view.locator(".anb-latest").click()
    assert "wrap-up after 12" in view.locator(".anb-final .anb-it").text_content()
    sc = view.locator(".anb-scroll")
    sc.evaluate("el => { el.scrollTop = 0; }")
    nb.page.wait_for_timeout(300)
    button = view.locator(".anb-repeat").first
    button.wait_for(timeout=10_000)
    count = int(re.match(r"× (\d+)", button.text_content()).group(1))
    assert count >= 10
    cards = view.locator(".anb-rows > .anb-card[data-index]").count()
    assert cards <= 4  # the question, one collapsed card, maybe a different last one
    nb.shot("glass-collapsed-loop", view)
    folded = sc.evaluate("el => el.scrollHeight")
    button.click()
    nb.page.wait_for_timeout(400)
    assert view.locator(".anb-rows > .anb-card[data-index]").count() > cards  # unfolded
    assert sc.evaluate("el => el.scrollHeight") > 3 * folded
    sc.evaluate("el => { el.scrollTop = 0; }")
    nb.page.wait_for_timeout(300)
    assert view.locator(".anb-repeat").first.text_content() == f"× {count} (shown)"


def test_a_sub_agent_session_is_nested_and_collapsible(nb):
    nb.run(8)
    if "no as_tool" in nb.stdout(8):
        pytest.skip("agent.as_tool lands with the tools branch")
    view = view_of(nb, 8)
    sc = view.locator(".anb-scroll")
    sc.evaluate("el => { el.scrollTop = 0; }")
    box = view.locator(".anb-subsession").first
    box.wait_for(timeout=10_000)
    summary = box.locator("summary").first.text_content()
    assert re.match(r"sub-session parent\.p1 \(4 messages, final_answer\)", summary), summary
    assert box.get_attribute("open") is None  # collapsed
    box.locator("summary").first.click()
    nb.page.wait_for_timeout(300)
    inner = box.text_content()
    assert "search_weather" in inner and "示例城A 降雨概率 0.8，带伞" in inner
    assert box.locator(".anb-result").count() == 1  # the sub-agent's own call, paired
    box.scroll_into_view_if_needed()
    nb.shot("glass-subsession", view)


def test_a_tool_traceback_is_on_its_result_card_collapsed(nb):
    nb.run(9)
    if nb.stdout(9).split()[0] != "True":
        pytest.skip("ToolFinished.traceback lands with the perf branch")
    view = view_of(nb, 9)
    sc = view.locator(".anb-scroll")
    sc.evaluate("el => { el.scrollTop = 0; }")
    tb = view.locator(".anb-result .anb-traceback").first
    tb.wait_for(timeout=10_000)
    assert tb.get_attribute("open") is None  # collapsed
    assert "ZeroDivisionError" in tb.locator("summary").text_content()
    tb.locator("summary").click()
    assert "return a / b" in tb.locator("pre").text_content()
    nb.shot("glass-traceback", view)


def test_the_request_inspector_shows_the_agents_window_reserve_and_policy(nb):
    nb.run(10)
    box = nb.output(10).locator(".anb-request")
    box.wait_for(timeout=30_000)
    text = box.locator(".anb-budget").text_content()
    assert "context window 1,500 tok" in text and "300 reserved for the reply" in text
    assert "no context_window" not in text
    policy = box.locator(".anb-policy").text_content()
    assert policy.startswith("context policy: drop_oldest") and "dropped" in policy
    nb.shot("glass-inspector-budget", box)
