"""A description-only variant in JupyterLab + Chromium (issue 36 item 1): a tool description
typed into the Playground reaches the model of tasks that give their own tools
(``Task(tools=factory)``), and the prompt diff the Playground and ``ev.compare`` show is read
from what the runs sent. Screenshots go to .artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.browser.lab import opened

SETUP = """
import json
import agentnb as an
from agentnb import checks

def desk():
    # a per-run booking desk: its tool and the rooms it booked
    booked = []

    @an.tool
    def book(room: str) -> str:
        \"\"\"Book a meeting room.\"\"\"
        booked.append(room)
        return f"booked {room}"

    return [book], booked

def books_a_when_told(request):
    # room A when the tool's description says so, else room B
    if request.messages[-1]["role"] == "tool":
        return "Booked."
    text = request.tools[0]["function"]["description"]
    args = json.dumps({"room": "A" if "room A" in text else "B"})
    call = {"id": "c0", "type": "function", "function": {"name": "book", "arguments": args}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}

def booked_a(rooms):
    return rooms == ["A"] or f"booked {rooms}"

tasks = an.TaskSet([an.Task(f"standup-{i}", f"Book a room for standup {i}.",
                            [checks.end_state(booked_a)], tools=desk) for i in range(3)])
agent = an.Agent("You book meeting rooms.", desk()[0], an.models.FunctionModel(books_a_when_told))
print("ready")
"""
PLAYGROUND = "pg = an.widgets.Playground(agent, tasks)\nawait pg.run()\npg"
SENT = """sent = [r.request.tools[0]["function"]["description"]
        for r in pg.evaluation.session("v1", "standup-0").requests]
print(json.dumps(sent), pg.comparison.improved, pg.comparison.verdict)"""
COMPARE = "pg.evaluation.compare('v0', 'v1')"
CELLS = [SETUP, PLAYGROUND, SENT, COMPARE]
TOLD = "Book a meeting room. Always book room A: the others are being repainted."


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "description_variant.ipynb", CELLS) as notebook:
        yield notebook


def test_a_description_typed_in_the_playground_reaches_a_factorys_tools(nb):
    nb.run(1)
    out = nb.output(1)
    area = out.locator("textarea[data-tool='book']")
    area.wait_for(timeout=30_000)
    assert area.input_value() == "Book a meeting room."
    area.fill(TOLD)
    out.get_by_role("button", name="▶ Run").click()
    out.get_by_text("v1 done").wait_for(timeout=60_000)
    verdict = out.locator(".anb-sub", has_text="v1 against v0")
    verdict.wait_for(timeout=10_000)
    diff = out.locator(".anb-pg-promptdiff")
    assert "tool book: description" in diff.inner_text()
    marks = " ".join(m.inner_text() for m in diff.locator("mark").all())
    assert "Always book room A" in marks, marks
    assert out.get_by_text("improved: standup-0").is_visible()
    diff.scroll_into_view_if_needed()
    nb.shot("description-variant-playground", out)
    # what the model of a factory-made tool was sent: the text typed, in both requests
    nb.run(2)
    said = nb.stdout(2)
    assert said.startswith(f'["{TOLD}", "{TOLD}"]'), said
    assert "'standup-0', 'standup-1', 'standup-2'" in said


def test_the_comparison_shows_the_description_the_runs_sent(nb):
    nb.run(3)
    out = nb.output(3)
    diff = out.locator(".agentnb-prompt-diff")
    diff.wait_for(timeout=30_000)
    text = diff.inner_text()
    assert "tool book" in text and "instructions" not in text
    assert "Always book room A" in " ".join(m.inner_text() for m in diff.locator("mark").all())
    nb.shot("description-variant-compare", out)
