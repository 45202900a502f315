"""A conversation in JupyterLab + Chromium (issue 38): it fills in live, each simulated user
message marked with the rule that produced it, the user's side in a strip; then a person
takes the user's side over from the view and hands it back. Screenshots go to
.artifacts/screenshots/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.browser.lab import opened

SETUP = """
import asyncio
import agentnb as an
from agentnb.evals import Conversation, User
from agentnb.travel import TravelModel

inner = TravelModel()

async def slowly(request):
    await asyncio.sleep(0.6)  # a model's pace: the view fills in while you watch
    return await inner.complete(request)

agent = an.travel.travel_agent(model=an.models.FunctionModel(slowly, name="slow stand-in"))
talk = Conversation(agent, User("周五上海到北京的航班", {"date": "周五"}, wants=["起飞"]), "上海到北京的航班")
mine = Conversation(an.travel.travel_agent(),
                    User("周五上海到北京的航班", {"date": "周五", "origin": "上海"}, wants=["起飞"]), "到北京的航班")
print("ready")
"""
CELLS = [
    SETUP,
    "talk",
    "running = asyncio.ensure_future(talk.finish())",
    "await running\nprint([t.rule for t in talk.turns], talk.stop_reason)",
    "mine",
    "print([(t.by, t.text) for t in mine.turns], mine.stop_reason)",
    "ev = await an.evaluate({'article': an.travel.travel_agent(), 'no_clarification': an.travel.no_clarification_agent()},\n"
    "                       an.travel.conversation_tasks().select(['talk-which-day-flight']), progress=False)\n"
    "ev.outputs()",
    "ev.diff('talk-which-day-flight', ['article', 'no_clarification'])",
]


@pytest.fixture(scope="module")
def nb(lab, context):
    with opened(lab, context, "conversation.ipynb", CELLS) as notebook:
        yield notebook


def _into_view(item):
    """Scroll in one step (a live view redraws a card when its state changes: an element handle
    waited on for stability can be detached meanwhile; the locator resolves it afresh)."""
    item.evaluate("el => el.scrollIntoView({block: 'center'})")


def test_a_conversation_fills_in_live_with_the_users_turns_marked(nb):
    nb.run(1)
    view = nb.output(1)
    view.locator(".anb-session").wait_for(timeout=30_000)
    nb.run(2)
    answer = view.locator(".anb-su", has_text="simulated user · answer")
    answer.wait_for(timeout=60_000)  # the user's reply to "哪天出发？" has landed
    assert "the answer asks for date" in answer.get_attribute("title")
    strip = view.locator(".anb-talk")
    assert (
        "played by the rules" in strip.inner_text()
        and "goal: 周五上海到北京的航班" in strip.inner_text()
    )
    assert not nb.stdout(3)  # not awaited yet: the conversation is still going on
    nb.shot("conversation-live", view)
    nb.run(3)
    assert nb.stdout(3).strip() == "['opening', 'answer', 'done'] user_done"
    view.locator(".anb-talk-stop", has_text="stopped: user_done").wait_for(timeout=30_000)
    badges = view.locator(".anb-su").all_inner_texts()
    assert badges == [
        "⚙ simulated user · opening",
        "⚙ simulated user · answer",
        "⚙ simulated user · done",
    ]
    notes = view.locator(".anb-su-note").all_inner_texts()
    assert any("why: the answer asks for date" in n for n in notes)
    _into_view(view.locator(".anb-su").last)
    nb.shot("conversation-done", view)


def test_a_person_takes_over_the_users_side_from_the_view_and_hands_it_back(nb):
    nb.run(4)
    view = nb.output(4)
    view.locator(".anb-controls").wait_for(timeout=30_000)
    view.locator("button.anb-step").click()  # the user's turn, one step: its opening lands
    view.locator(".anb-su", has_text="opening").wait_for(timeout=30_000)
    take = view.locator("button.anb-take-over")
    assert take.inner_text() == "Take over"
    take.click()
    view.locator("button.anb-take-over", has_text="Hand back").wait_for(timeout=10_000)
    box = view.locator(".anb-input")
    assert box.get_attribute("placeholder") == "your reply, as the user (Enter sends it)"
    box.fill("周五，从上海出发")
    box.press("Enter")
    person = view.locator(".anb-su-person")
    person.wait_for(timeout=60_000)
    assert person.inner_text() == "✍ typed by a person"
    view.locator(".anb-card.anb-final", has_text="MU5101").wait_for(timeout=60_000)
    _into_view(person)
    nb.shot("conversation-taken-over", view)
    view.locator("button.anb-take-over").click()  # hand back
    view.locator("button.anb-take-over", has_text="Take over").wait_for(timeout=10_000)
    view.locator("button.anb-run").click()
    view.locator(".anb-talk-stop", has_text="stopped: user_done").wait_for(timeout=60_000)
    nb.run(5)
    said = nb.stdout(5)
    assert said.startswith(
        "[('rules', '到北京的航班'), ('person', '周五，从上海出发'), ('rules', '好的，谢谢，就这样。')]"
    )
    assert said.strip().endswith("user_done")
    _into_view(view.locator(".anb-su").last)
    nb.shot("conversation-handed-back", view)


def test_the_outputs_fold_turns_and_the_diff_aligns_by_turn(nb):
    nb.run(6)
    grid = nb.output(6)
    turns = grid.locator("details.anb-turns").nth(1)
    turns.locator("summary").click()  # the no-clarification run's turns
    turns.get_by_text("不对，日期是周五。").wait_for(timeout=10_000)
    assert "[rules: correct]" in turns.inner_text()
    nb.shot("conversation-outputs-turns", grid)
    nb.run(7)
    diff = nb.output(7)
    users = diff.locator("tr.anb-t-user")
    users.first.wait_for(timeout=30_000)
    assert users.count() == 3
    changed = diff.locator("tr.anb-t-user.anb-t-changed")
    assert "user: 不对，日期是周五。" in changed.inner_text() and "turn 1" in changed.inner_text()
    nb.shot("conversation-diff-by-turn", diff)
