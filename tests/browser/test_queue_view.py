"""QueueView in JupyterLab + Chromium: it updates while 200 tasks run, a row opens its
session, Cancel works. Screenshots go to .artifacts/screenshots/queue-*.png."""

from __future__ import annotations

import re
import time

import pytest

from tests.browser.lab import Notebook, opened

SETUP = '''
import asyncio, json
import agentnb as an
gate = asyncio.Event()

@an.tool
async def lookup(city: str) -> dict:
    """Trains to a city."""
    await asyncio.sleep(0.15)
    return {"city": city, "train": "G1"}

async def reply(request):
    last = request.messages[-1]
    if last["role"] == "user" and last["content"] == "hold":
        await gate.wait()
    await asyncio.sleep(0.15)
    if last["role"] == "user":
        return {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "lookup", "arguments": json.dumps({"city": "北京"})}}]}
    return {"role": "assistant", "content": "G1 to 北京 <b>not bold</b>"}

rt = an.Runtime(an.Agent(tools=[lookup], model=an.models.FunctionModel(reply)), max_concurrency=8)
print("ready")
'''
VIEW = "view = rt.view(height=320)\nview"
SUBMIT = """held = await rt.submit("held-user", "hold")
ids = [await rt.submit(f"user-{i % 40}", f"task {i}") for i in range(200)]
print("submitted", len(ids))"""
CHECK = "print(rt.status(held).status, rt.counts()['done'], rt.session('held-user').is_valid)"
UNCERTAIN = """from agentnb.tools.results import UNCERTAIN, UNCERTAIN_HINT, error_content
crashed = an.Session(id="crashed")
crashed.append({"role": "user", "content": "订两晚全季"})
crashed.append({"role": "assistant", "content": "", "tool_calls": [{"id": "b1", "type": "function",
                "function": {"name": "book_hotel", "arguments": "{}"}}]})
crashed.append({"role": "tool", "tool_call_id": "b1", "name": "book_hotel",
                "content": error_content(UNCERTAIN, UNCERTAIN_HINT, kind="uncertain")})
crashed"""
APPROVALS = """@an.tool(side_effects=True, approval=True)
def pay(amount: int) -> str:
    \"\"\"Charges the card (a person approves each payment first).\"\"\"
    return f"paid {amount}"

def pays(request):
    last = request.messages[-1]
    if last["role"] == "user":
        args = json.dumps({"amount": int(last["content"])})
        return {"role": "assistant", "content": "", "tool_calls": [{"id": "p1", "type": "function",
                "function": {"name": "pay", "arguments": args}}]}
    outcome = json.loads(last["content"]) if last["content"].startswith("{") else {}
    return {"role": "assistant", "content": f"{outcome['kind']}: {outcome['error']}"
            if outcome.get("kind") else last["content"]}

approving = an.Runtime(an.Agent(tools=[pay], model=an.models.FunctionModel(pays)))
asked = [await approving.submit("guest", "30"), await approving.submit("other", "3000")]
while approving.counts()["awaiting_approval"] < 2:
    await asyncio.sleep(0.05)
queue = approving.view(height=160)
queue.open_task(asked[1])
queue"""
APPROVED = """print([approving.status(t).status for t in asked], approving.status(asked[0]).output,
      approving.status(asked[1]).output)"""
CELLS = [SETUP, VIEW, SUBMIT, CHECK, UNCERTAIN, APPROVALS, APPROVED]


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "queue.ipynb", CELLS) as notebook:
        yield notebook


def _done(head: str) -> int:
    found = re.search(r"done (\d+)", head)
    return int(found.group(1)) if found else -1


def test_queue_view_live_open_and_cancel(nb: Notebook) -> None:
    page = nb.page
    nb.run(1)
    out = nb.output(1)
    head = out.locator(".anb-queue-head")
    head.wait_for(timeout=30_000)
    nb.run(2)
    assert "submitted 200" in nb.stdout(2)
    page.wait_for_function(
        "() => document.querySelectorAll('tr.anb-q-row').length >= 201", timeout=30_000
    )
    page.wait_for_function(
        "() => document.querySelectorAll('tr.anb-q-running').length > 0", timeout=30_000
    )
    first = head.inner_text()
    running = out.locator("tr.anb-q-running").count()
    assert 1 <= running <= 8, running
    nb.shot("queue-running", out)
    samples = [_done(first)]
    deadline = time.monotonic() + 60
    while samples[-1] < 200 and time.monotonic() < deadline:  # no cell runs meanwhile
        time.sleep(0.5)
        samples.append(_done(head.inner_text()))
    assert samples[-1] == 200, samples
    assert len(set(samples)) >= 3, samples  # it moved while they ran, not once at the end
    assert "running 1" in head.inner_text()  # the held task still runs
    assert "queue depth 0" in head.inner_text()
    # a row opens its session below the table
    texts = out.locator("td.anb-q-text").all_inner_texts()
    assert texts[:3] == ["hold", "task 0", "task 1"]  # rows in submission order
    row = out.locator("tr.anb-q-row").filter(
        has=page.locator("td.anb-q-text", has_text=re.compile(r"^task 7$"))
    )
    assert row.locator("td.anb-q-session").inner_text() == "user-7"
    row.click()
    out.get_by_text("Session user-7").wait_for(timeout=30_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea')].some((o) => "
        "o.textContent.includes('task 47') && o.textContent.includes('G1 to 北京'))",
        timeout=30_000,
    )  # user-7's tasks: 7, 47, 87, ...
    assert out.locator("tr.anb-q-selected").count() == 1
    assert out.locator("b", has_text="not bold").count() == 0  # model text stays text
    nb.shot("queue-opened", out)
    # Cancel on the held task's row
    held = out.locator("tr.anb-q-row", has_text="held-user")
    held.locator("button.anb-q-cancel").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('tr.anb-q-row')].some((r) => "
        "r.textContent.includes('held-user') && r.classList.contains('anb-q-cancelled'))",
        timeout=30_000,
    )
    assert "running 0" in head.inner_text() and "cancelled 1" in head.inner_text()
    nb.shot("queue-cancelled", out)
    nb.run(3)
    assert nb.stdout(3).split() == ["cancelled", "200", "True"]


def test_an_uncertain_result_is_shown_as_such(nb: Notebook) -> None:
    nb.run(4)
    out = nb.output(4)
    out.get_by_text("error: uncertain").wait_for(timeout=30_000)
    assert "may or may not have happened" in out.inner_text()
    nb.shot("queue-uncertain", out)


def test_approve_and_deny_in_the_views(nb: Notebook) -> None:
    page = nb.page
    nb.run(5)
    out = nb.output(5)
    row = out.locator("tr.anb-q-awaiting_approval", has_text="guest")
    row.locator("button.anb-approve").wait_for(timeout=30_000)
    waiting = out.locator(".anb-waiting")  # the open session's call, under the table
    waiting.locator("button.anb-deny").wait_for(timeout=30_000)
    assert "awaiting approval" in waiting.inner_text()
    nb.shot("queue-awaiting", out)
    row.locator("button.anb-approve").click()  # Approve on the queue's row
    page.wait_for_function(
        "() => [...document.querySelectorAll('tr.anb-q-row')].some((r) => "
        "r.textContent.includes('guest') && r.classList.contains('anb-q-done'))",
        timeout=30_000,
    )
    waiting.locator("button.anb-deny").click()  # Deny on the call in the session view
    out.get_by_text("denied in the view").first.wait_for(timeout=30_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('tr.anb-q-row')].some((r) => "
        "r.textContent.includes('other') && r.classList.contains('anb-q-done'))",
        timeout=30_000,
    )
    nb.shot("queue-approved", out)
    # the call's idempotency key sits on its own line of the card, not over its arguments
    key = out.locator(".anb-call-head .anb-idem").first
    assert "t-" in key.inner_text()
    head, args = key.bounding_box(), out.locator(".anb-call .anb-args").first.bounding_box()
    assert head is not None and args is not None and head["width"] > 100
    assert head["y"] + head["height"] <= args["y"] + 1, (head, args)
    nb.run(6)
    assert nb.stdout(6).split() == [
        "['done',",
        "'done']",
        "paid",
        "30",
        "denied:",
        "denied",
        "in",
        "the",
        "view",
    ]
