"""The simulated user (an.User): rule-based and explainable, offline, reproducible; played by a
model through the same interface. Each test reads one rule of User.rules()."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import agentnb as an
from agentnb.errors import ConfigurationError
from agentnb.evals.user import DONE, RULES, SLIPS, User, UserTurn

FRIDAY = ["周五", "2025-01-10", "1月10日"]


def opening(user: User, text: str) -> list[UserTurn]:
    return [user.opening(text)]


def test_a_question_for_a_slot_it_holds_is_answered_from_its_facts():
    user = User("周五上海到北京的航班", {"date": FRIDAY, "budget": "3000"})
    turn = user.rules_reply("请问哪天出发？告诉我日期（例如 周五 或 1月10日）我再帮你查。",
                            opening(user, "上海到北京的航班"))  # fmt: skip
    assert turn.text.startswith("周五")
    assert turn.rule.startswith("answer") and turn.asked == ("date",)
    assert turn.gave["date"] == "周五" and "date" not in turn.held_back
    assert "asks for date" in turn.why


def test_a_question_outside_its_facts_is_i_dont_know_and_listed_unread():
    user = User("The weather in Beijing on Friday", {"city": "Beijing", "date": "Friday"})
    answer = "I am a travel assistant. Tell me where from, where to, when, and your budget."
    turn = user.rules_reply(answer, opening(user, "Hello"))
    assert "I don't know the origin or the budget" in turn.text
    assert turn.unread == ("asked for origin: not in my facts", "asked for budget: not in my facts")
    assert "dont_know" in turn.rule
    # never an invented fact: every word it gives is one of its facts, or "I don't know"
    assert turn.gave == {"city": "Beijing", "date": "Friday"}


def test_a_question_it_cannot_read_at_all_is_i_dont_know_too():
    user = User("x", {"date": "周五"})
    turn = user.rules_reply("你喜欢什么颜色？", opening(user, "你好"))
    assert turn.text.startswith("这个我不知道") and turn.unread == ("你喜欢什么颜色？",)


def test_an_answer_that_contradicts_a_date_is_corrected_and_costs_patience():
    user = User("周五上海到北京的航班", {"date": FRIDAY}, patience=3)
    answer = "航班：推荐 MU5101，2025-01-06（周一）08:00 从上海虹桥起飞。"
    turn = user.rules_reply(answer, opening(user, "上海到北京的航班"))
    assert turn.text == "不对，日期是周五。" and turn.rule == "correct"
    assert turn.patience == 2 and "it says 1-6" in turn.why
    weekday = User("Flights on Friday", {"date": "Friday"}, patience=3)
    turn = weekday.rules_reply("Flight: MU5101 on Mon, departs SHA.", opening(weekday, "Flights"))
    assert turn.rule == "correct" and "Mon" in turn.why


def test_the_city_asked_about_missing_from_an_answer_with_figures_is_corrected():
    user = User("北京明天会不会下雨", {"city": "北京"})
    turn = user.rules_reply(
        "天气：上海 2025-01-07（周二）晴，5～8°C。", opening(user, "明天会下雨吗？")
    )
    assert turn.text == "不对，我说的是北京。"


def test_a_proposal_is_confirmed():
    user = User("订酒店", {}, wants=[["预订成功"]])
    answer = "酒店：全季酒店 520 元/晚。需要我为你预订吗？预订前我会先和你确认。"
    turn = user.rules_reply(answer, opening(user, "订酒店"))
    assert turn.text == "好的，请预订。" and turn.rule == "confirm"


def test_done_when_the_answer_holds_what_it_wants_and_asks_nothing_it_holds():
    user = User("北京明天的天气", {"city": "北京"}, wants=[["°C"]])
    asks = user.rules_reply("天气：请告诉我要查哪个城市的天气。", opening(user, "明天会下雨吗？"))
    assert not asks.done
    done = user.rules_reply(
        "天气：北京 2025-01-07 多云，-9～0°C。", [*opening(user, "明天会下雨吗？"), asks]
    )
    assert done.done and done.rule == "done" and done.text == "好的，谢谢，就这样。"


def test_an_unhelpful_answer_restates_the_goal_and_a_spent_patience_gives_up():
    user = User("周五坐飞机从上海去杭州", {}, wants=["起飞"], patience=2)
    no = "航班：上海→杭州 没有可订的航班（两地之间没有直飞航班）。"
    first = user.rules_reply(no, opening(user, "周五从上海飞杭州的航班"))
    assert first.rule == "restate" and first.text == "我要的是：周五坐飞机从上海去杭州。"
    assert first.patience == 1
    second = user.rules_reply(no, [*opening(user, "周五从上海飞杭州的航班"), first])
    assert second.gave_up and second.rule == "give_up" and second.patience == 0
    assert second.text == "算了，我自己再想办法吧。" and "patience spent" in second.why


def test_asked_again_for_a_fact_it_gave_is_answered_again_and_counted():
    user = User("x", {"date": "周五"}, patience=3)
    said = user.opening("周五上海到北京的航班")
    assert said.gave == {"date": "周五"}
    turn = user.rules_reply("请问哪天出发？", [said])
    assert turn.rule == "answer_again" and turn.repeated == ("date",) and turn.patience == 2


def test_a_change_of_mind_at_turn_k_and_waiting_for_an_answer_that_takes_it():
    user = User(
        "出差，预算以最新为准", {"budget": "3000"}, wants=["预算"], changes={1: {"budget": "1300"}}
    )
    first = user.opening("周五去北京，预算3000")
    change = user.rules_reply("预算：合计 1400 元，在 3000 元预算内。", [first])
    assert change.text == "我改主意了：预算改成1300。" and change.rule == "change_mind"
    # an answer still priced against 3000 contradicts the new budget: corrected
    stale = user.rules_reply("预算：合计 1400 元，在 3000 元预算内。", [first, change])
    assert stale.rule == "correct" and "1300" in stale.text
    fresh = user.rules_reply("预算：合计 1400 元，超出 1300 元预算 100 元。", [first, change])
    assert fresh.done


def test_held_back_facts_are_volunteered_unless_only_when_asked():
    facts = {"origin": "上海", "date": "周五"}
    eager = User("x", facts)
    turn = eager.rules_reply("请问从哪个城市出发？", opening(eager, "去北京的航班"))
    assert turn.text == "从上海出发，周五。" and "volunteer" in turn.rule
    shy = User("x", facts, only_when_asked=1.0)
    turn = shy.rules_reply("请问从哪个城市出发？", opening(shy, "去北京的航班"))
    assert turn.text == "从上海出发。" and turn.held_back == ("date",)


def test_a_vague_first_message_leaves_out_its_clauses_with_facts():
    user = User("x", {"origin": "上海", "destination": "北京", "budget": "3000"}, vague_first=1.0)
    turn = user.opening("我周五从上海去北京出差，帮我订个酒店，预算3000")
    assert turn.text == "帮我订个酒店。" and turn.rule == "opening+vague_first"
    assert turn.slips == ("vague_first",) and "'预算3000'" in turn.why
    assert set(turn.held_back) == {"origin", "destination", "budget"}
    never = User("x", {"origin": "上海"}, vague_first=0.0)
    assert never.opening("从上海出发，帮我订个酒店").text == "从上海出发，帮我订个酒店"


def test_a_typo_is_seeded_and_said():
    typed = [
        User("x", {"date": "Friday"}, typo=1.0, seed=s).opening("Flights to Beijing")
        for s in range(4)
    ]
    assert all(t.slips == ("typo",) and "→" in t.why for t in typed)
    assert {t.text for t in typed} != {"Flights to Beijing"}
    again = User("x", {"date": "Friday"}, typo=1.0, seed=2).opening("Flights to Beijing")
    assert again == typed[2]


def test_every_rule_a_turn_names_is_a_row_of_the_table():
    table = User.rules()
    assert set(RULES) | set(SLIPS) == set(table["rule"])
    user = User("周五上海到北京的航班", {"date": "周五", "budget": "3000"}, wants=["起飞"])
    turns = [user.opening("上海到北京的航班")]
    for answer in (
        "请问哪天出发？你的会员号是多少？",
        "航班：没有可订的。",
        "航班：MU5101 08:00 起飞。",
    ):
        turns.append(user.rules_reply(answer, turns))
    for t in turns:
        assert all(part in RULES for part in t.rule.split("+")), t.rule


def test_the_same_seed_gives_the_same_conversation_in_two_fresh_processes():
    """Acceptance: one conversation task, one seed, two interpreters: identical transcripts,
    every simulated turn with its rule."""
    code = textwrap.dedent(
        """
        import asyncio, json, agentnb as an
        task = an.travel.conversation_tasks()["talk-vague-first-en"]
        user = an.User(task.user.goal, task.user.facts, wants=task.user.wants, typo=0.5,
                       vague_first=0.5, only_when_asked=0.5, seed=7)
        talk = an.evals.Conversation(an.travel.travel_agent(language="en"), user, task.input)
        turns = asyncio.run(talk.finish())
        print(json.dumps({"messages": talk.session.to_openai(),
                          "rules": [t.rule for t in turns.user], "stop": turns.stop_reason},
                         ensure_ascii=False))
        """
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    first, second = (json.loads(r.stdout) for r in runs)
    assert first == second
    assert (
        first["rules"]
        and all(first["rules"])
        and first["stop"] in an.events.CONVERSATION_STOP_REASONS
    )
    assert len([m for m in first["messages"] if m["role"] == "user"]) == len(first["rules"])


async def test_a_user_played_by_a_model_runs_through_the_same_interface():
    """Acceptance: an LLM-played user (a FunctionModel here) replies through User.reply."""
    seen = []

    def play(request, seed):
        seen.append((request, seed))
        last = request.messages[-1]["content"]
        return f"Friday. {DONE}" if "Flight:" in last else "Which day? Friday."

    user = User("Flights from Shanghai to Beijing on Friday", {"date": "Friday"},
                model=an.models.FunctionModel(play), seed=3)  # fmt: skip
    turn = await user.reply(["Flight: MU5101, 2025-01-10 (Fri)."], [user.opening("Flights")])
    assert turn.by == "model" and turn.rule == "model" and turn.done and turn.text == "Friday."
    request, seed = seen[0]
    system = request.messages[0]["content"]
    assert "Flights from Shanghai to Beijing on Friday" in system and "- date: Friday" in system
    assert [m["role"] for m in request.messages] == ["system", "assistant", "user"]
    assert isinstance(seed, int)
    assert "prompt" in user.describe() and user.describe()["by"] == "model"


async def test_a_user_saves_and_reads_back_and_a_model_user_refuses_without_its_model():
    user = User("x", {"date": FRIDAY}, persona="terse", changes={2: {"budget": "1"}},
                wants=[["a", "b"]], typo=0.1, seed=4)  # fmt: skip
    again = User.from_dict(json.loads(json.dumps(user.to_dict())))
    assert again.to_dict() == user.to_dict() and again.by == "rules"
    played = User("x", model=an.models.FunctionModel(lambda r: "hi"))
    data = played.to_dict()
    assert data["played_by"] and "prompt" not in data
    back = User.from_dict(data)
    with pytest.raises(ConfigurationError, match="played by the model"):
        await back.reply(["hello"], [back.opening("hi")])


def test_bad_knobs_are_refused_when_made():
    with pytest.raises(ConfigurationError, match="goal"):
        User("")
    with pytest.raises(ConfigurationError, match="chance"):
        User("x", typo=2)
    with pytest.raises(ConfigurationError, match="turn"):
        User("x", changes={0: {"date": "周五"}})
    with pytest.raises(ConfigurationError, match="played by one of"):
        UserTurn(0, "x", by="robot")
