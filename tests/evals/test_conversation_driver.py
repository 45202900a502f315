"""Conversation: agent and user turn by turn on one session, each turn a run tagged with it,
the user's turn a stage, a person taking over, the documented stop reasons."""

from __future__ import annotations

import pytest

import agentnb as an
from agentnb.errors import RunStateError
from agentnb.evals import Conversation, User, UserTurn
from agentnb.evals.turns import turns_of
from agentnb.evals.user import UserReplied


def _talk(user: User | None = None, text: str = "上海到北京的航班", **options) -> Conversation:
    user = user or User("周五上海到北京的航班", {"date": "周五"}, wants=["起飞"])
    return Conversation(an.travel.travel_agent(), user, text, **options)


async def test_each_turn_is_a_run_tagged_with_it_and_the_user_turn_is_its_record():
    talk = _talk(tags={"task": "t"})
    turns = await talk.finish()
    assert turns.stop_reason == "user_done" and len(turns) == 2
    records = talk.session.runs
    assert [r.tags for r in records] == [{"task": "t", "turn": "0"}, {"task": "t", "turn": "1"}]
    assert [r.annotations["user"].rule for r in records] == ["opening", "answer"]
    assert records[-1].annotations["conversation"].closing.rule == "done"
    # the transcript says why it ended: the user's closing words are its last message
    assert talk.session.messages[-1].text == "好的，谢谢，就这样。"
    again = turns_of(talk.session, records[-1])
    assert [t.text for t in again.user] == ["上海到北京的航班", "周五。", "好的，谢谢，就这样。"]
    assert again.answers == turns.answers and again.messages[-1].text == "好的，谢谢，就这样。"


async def test_step_steps_the_users_turn_like_a_stage():
    talk = _talk()
    heard = []
    talk.session.subscribe(lambda e: heard.append(e) if isinstance(e, UserReplied) else None)
    assert talk.next_stage == "user"
    first = await talk.step()
    assert isinstance(first, UserTurn) and first.rule == "opening"
    assert talk.session.messages[-1].text == "上海到北京的航班"  # it landed with the step
    assert talk.next_stage == "assemble"
    stages = []
    while talk.next_stage != "user":
        stages.append((await talk.step()).stage)
    assert stages[-1] == "persist" and "call_model" in stages
    second = await talk.step()
    assert isinstance(second, UserTurn) and second.text == "周五。"
    assert [e.stage for e in heard] == ["user", "user"] and heard[1].turn["rule"] == "answer"
    assert heard[1].index == len(talk.session) - 1  # where its message landed


async def test_a_user_who_gives_up_and_a_turn_limit_are_stop_reasons():
    gives_up = _talk(
        User("周五坐飞机从上海去杭州", {}, wants=["起飞"], patience=2), "周五从上海飞杭州的航班"
    )
    turns = await gives_up.finish()
    assert turns.stop_reason == "user_gave_up" and turns.closing.gave_up
    assert gives_up.session.messages[-1].text == "算了，我自己再想办法吧。"
    limited = _talk(User("周五坐飞机从上海去杭州", {}, wants=["起飞"], patience=5, max_turns=2),
                    "周五从上海飞杭州的航班")  # fmt: skip
    turns = await limited.finish()
    assert turns.stop_reason == "max_turns" and len(turns) == 2
    assert turns.closing.rule == "restate"  # recorded, never sent
    assert limited.session.messages[-1].role == "assistant"
    assert "user_gave_up" in an.events.CONVERSATION_STOP_REASONS


async def test_a_person_takes_over_the_users_side_and_hands_it_back():
    talk = _talk(User("周五上海到北京的航班", {"date": "周五", "origin": "上海"}, wants=["起飞"]),
                 "到北京的航班")  # fmt: skip
    await talk.step()  # the simulated user's opening
    talk.take_over()
    await talk.until_user()
    with pytest.raises(RunStateError, match="taken over"):
        await talk.step()
    said = await talk.say("从上海出发")
    assert said.by == "person" and said.rule == "person" and said.gave == {"origin": "从上海出发"}
    assert talk.session.runs[-1].annotations["user"] is said
    talk.hand_back()
    turns = await talk.finish()
    assert [t.by for t in turns.user] == ["rules", "person", "rules", "rules"]
    assert (
        turns.user[2].text == "周五。"
    )  # it answered what was asked; the origin came from the person
    assert turns.stop_reason == "user_done"


async def test_cancel_stops_the_conversation_and_a_finished_one_refuses_more():
    talk = _talk()
    await talk.step()
    await talk.step()
    talk.cancel()
    assert talk.stop_reason == "cancelled" and talk.session.is_valid
    with pytest.raises(RunStateError, match="over"):
        await talk.step()
    with pytest.raises(RunStateError, match="over"):
        await talk.say("hi")


async def test_recorded_turns_are_replayed_never_regenerated_and_a_different_answer_stops_it():
    recorded = _talk()
    await recorded.finish()
    turns = turns_of(recorded.session).user

    class Silent(User):
        def opening(self, text):
            raise AssertionError("a replayed user is never asked")

        async def reply(self, answers, earlier):
            raise AssertionError("a replayed user is never asked")

    mute = Silent("x", {"date": "周五"})
    same = Conversation(an.travel.travel_agent(), mute, "上海到北京的航班", recorded=turns)
    done = await same.finish()
    assert done.stop_reason == "user_done" and [t.by for t in done.user] == ["recording"] * 3
    english = an.travel.travel_agent(instructions=an.travel.INSTRUCTIONS + "\n请用英文回答。")
    other = Conversation(english, mute, "上海到北京的航班", recorded=turns)
    parted = await other.finish()
    assert parted.stop_reason == "mismatch" and parted.stop_detail.startswith(
        "turn 1: the agent answered"
    )
    none = Conversation(an.travel.travel_agent(), mute, "x", recorded=[])
    assert (await none.finish()).stop_reason == "not_recorded"
