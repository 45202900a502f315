"""A conversation in the session view: the simulated user's turns marked with their rules,
the user's side in a strip, the controls stepping the user's turn, a person taking over."""

from __future__ import annotations

import agentnb as an
from agentnb import display
from agentnb.evals import Conversation, User
from agentnb.widgets import SessionView, payload


def _talk() -> Conversation:
    task = an.travel.conversation_tasks()["talk-which-day-flight"]
    return Conversation(an.travel.travel_agent(), task.user, task.input)


async def test_the_users_turns_are_marked_live_and_in_the_snapshot(comms):
    talk = _talk()
    view = SessionView(talk.session)
    comm = comms[-1]
    await talk.finish()
    assert view.status["reason"] == "final_answer"  # each turn's run stops as runs do
    appended = [
        m for m in comm.custom() if m.get("op") == "append" and (m["m"]["w"]["role"] == "user")
    ]
    assert [m["m"]["su"]["rule"] for m in appended] == ["opening", "answer", "done"]
    assert (
        appended[1]["m"]["su"]["why"] == "the answer asks for date"
        and appended[1]["m"]["su"]["by"] == "rules"
    )
    strips = [
        m["talk"]
        for m in comm.custom()
        if m.get("op") == "event" and m["e"]["type"] == "UserReplied"
    ]
    assert [s["held_back"] for s in strips] == [["date"], [], []]
    assert strips[-1]["stop"] == "user_done" and strips[-1]["goal"] == "周五上海到北京的航班"
    rows = [
        m["e"] for m in comm.custom() if m.get("op") == "event" and m["e"]["type"] == "UserReplied"
    ]
    assert {r["stage"] for r in rows} == {"user"}  # the user's turn in the timeline, as a stage
    late = payload.unpack(SessionView(talk.session).snapshot)  # a late view: from the records
    marked = {i: m["su"]["rule"] for i, m in enumerate(late["messages"]) if "su" in m}
    assert marked == {0: "opening", 2: "answer", 6: "done"}
    assert late["talk"]["stop"] == "user_done" and late["talk"]["patience"] == 2


async def test_the_controls_step_the_users_turn_and_a_person_takes_over(comms):
    user = User("周五上海到北京的航班", {"date": "周五", "origin": "上海"}, wants=["起飞"])
    talk = Conversation(an.travel.travel_agent(), user, "到北京的航班")
    view = SessionView(talk.session, conversation=talk)
    comm = comms[-1]
    assert payload.unpack(view.snapshot)["talk"]["driven"] is True
    comm.deliver({"op": "step"})
    await view.driver.task
    assert len(talk.session) == 1 and view.status["next"] == "assemble"  # the user's turn, one step
    comm.deliver({"op": "take_over"})
    assert talk.person and [m for m in comm.custom() if m.get("op") == "talk"][-1]["talk"]["person"]
    comm.deliver({"op": "run"})
    await view.driver.task
    assert talk.run is None and view.status["note"] == "your turn: type the user's message"
    comm.deliver({"op": "say", "text": "从上海出发"})
    await view.driver.task
    assert talk.turns[-1].by == "person" and talk.turns[-1].text == "从上海出发"
    comm.deliver({"op": "hand_back"})
    comm.deliver({"op": "run"})
    await view.driver.task
    assert talk.done and view.status["reason"] == "user_done"
    marks = {
        m["m"]["su"]["by"] for m in comm.custom() if m.get("op") == "append" and "su" in m["m"]
    }
    assert marks == {"rules", "person"}


def test_a_conversation_shows_its_bound_view_through_the_display_door(comms):
    talk = _talk()
    shown = display.view(talk)
    assert isinstance(shown, SessionView) and shown.driver.conversation is talk
    assert "上海到北京的航班" not in talk.static_bundle()["text/html"]  # nothing said yet


async def test_a_message_typed_while_a_step_finishes_is_sent_after_it_never_dropped(comms):
    user = User("周五上海到北京的航班", {"date": "周五", "origin": "上海"}, wants=["起飞"])
    talk = Conversation(an.travel.travel_agent(), user, "到北京的航班")
    view = SessionView(talk.session, conversation=talk)
    comm = comms[-1]
    comm.deliver({"op": "step"})  # still running when the person types
    comm.deliver({"op": "take_over"})
    comm.deliver({"op": "say", "text": "周五，从上海出发"})
    await view.driver.task
    assert [t.by for t in talk.turns] == ["rules", "person"]
    comm.deliver({"op": "say", "text": "  "})
    assert view.status["note"].startswith("an empty message is not sent")


async def test_run_clicked_while_a_message_is_being_answered_runs_on_after_it(comms):
    user = User("周五上海到北京的航班", {"date": "周五", "origin": "上海"}, wants=["起飞"])
    talk = Conversation(an.travel.travel_agent(), user, "到北京的航班")
    view = SessionView(talk.session, conversation=talk)
    comm = comms[-1]
    comm.deliver({"op": "step"})
    comm.deliver({"op": "take_over"})
    comm.deliver({"op": "say", "text": "周五，从上海出发"})
    comm.deliver({"op": "hand_back"})
    comm.deliver({"op": "run"})  # the person's message is still being answered
    while not talk.done:
        await view.driver.task
    assert talk.stop_reason == "user_done" and [t.by for t in talk.turns] == [
        "rules",
        "person",
        "rules",
    ]


async def test_the_live_output_grid_folds_a_conversations_turns_under_its_answer(comms):
    """Issue 38: one row per conversation, its turns expandable, in the live grid too."""
    from agentnb.widgets.grid import OutputsGrid, grid_state

    tasks = an.travel.conversation_tasks().select(["talk-which-day-flight", "talk-which-city"])
    variants = {"article": an.travel.travel_agent(), "guess": an.travel.no_clarification_agent()}
    ev = await an.evaluate(variants, tasks, progress=False)
    state = grid_state(ev)
    talk = state["cells"]["talk-which-day-flight"]["guess"][0]["talk"]
    assert talk["stop"] == "user_done" and talk["turns"] == len(talk["answers"]) == 2
    assert [(t["by"], t["rule"]) for t in talk["user"]] == [
        ("rules", "opening"),
        ("rules", "correct"),
        ("rules", "done"),
    ]
    assert talk["user"][1]["text"] == "不对，日期是周五。"
    grid = display.view(ev.outputs())
    assert isinstance(grid, OutputsGrid) and grid.data["cells"] == payload.displayable(
        state["cells"]
    )
    one = an.travel.task_set().select(an.travel.task_set().names[:1])  # one request: no turns
    plain = await an.evaluate({"article": an.travel.travel_agent()}, one, progress=False)
    assert [c["talk"] for v in grid_state(plain)["cells"].values() for c in v["article"]] == [None]
