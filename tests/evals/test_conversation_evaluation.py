"""Conversation tasks in evaluations: rows over every turn, checks over the conversation,
files, replay (the user's turns replayed like tool results), the service, the optimiser,
the outputs grid and the trajectory diff."""

from __future__ import annotations

from collections import Counter

import pytest

import agentnb as an
from agentnb.evals import User
from agentnb.evals.trajectory import align
from agentnb.travel.booking import BookingDesk

ran: Counter[str] = Counter()


def counting_desk():
    """A booking desk whose tools count what they really execute."""
    desk = BookingDesk()
    for tool in desk.tools:
        fn = tool.fn

        async def counted(*args, _fn=fn, _name=tool.name, **kwargs):
            ran[_name] += 1
            return await _fn(*args, **kwargs)

        tool.fn = counted
    return list(desk.tools), desk


def _tasks(**only):
    tasks = an.travel.conversation_tasks(**only)
    return an.TaskSet([t.model_copy(update={"tools": counting_desk}) for t in tasks], name="t")


async def test_a_row_is_the_whole_conversation():
    ev = await an.evaluate(
        {"article": an.travel.travel_agent()}, _tasks(tags=["ambiguous"]), progress=False
    )
    row = ev.record("article", "talk-which-city")
    talk = row.conversation
    assert row.stop_reason == "user_done" and len(talk) == 2 and len(row.runs) == 2
    assert [r.tags["turn"] for r in row.runs] == ["0", "1"]
    assert (
        row.prompt_tokens
        == sum(r.billed.prompt_tokens for r in row.runs)
        > row.run.usage.prompt_tokens
    )
    assert ev.runs.set_index("task").loc["talk-which-city", "stop_reason"] == "user_done"
    assert [t.rule for t in talk.user] == ["opening", "answer", "done"]
    # the row's figures are every turn's, read from their records: no second home
    assert row.model_calls == sum(r.iterations for r in row.runs) > row.run.iterations
    assert row.tokens == sum(r.usage.total_tokens for r in row.runs) > row.run.usage.total_tokens
    assert row.messages == talk.messages and row.messages[0].role == "user"
    assert row.steps == sum(1 for m in talk.messages if getattr(m, "tool_calls", None))


async def test_checks_read_the_last_turn_unless_over_the_conversation():
    judged = []

    def grader(request):
        judged.append(request.messages[1]["content"])
        return '{"verdict": "pass", "reasoning": "it asked, then answered"}'

    task = an.Task(
        "which-city", "明天会下雨吗？",
        [an.checks.calls("search_weather", city="北京"),  # the last turn: the weather call
         an.checks.no_call(),  # the last turn made a call: fails
         an.checks.no_call(over="conversation"),  # fails too, over every turn
         an.checks.answer_contains("请告诉我", over="turn"),  # the last answer: it no longer asks
         an.checks.stops_with("user_done", over="conversation"),
         an.checks.goal_reached(), an.checks.turns(max=2), an.checks.turns(min=3),
         an.checks.asked_for("city"), an.checks.asked_for("budget"), an.checks.never_asked_twice(),
         an.checks.judge(an.models.FunctionModel(grader), "asks which city", over="conversation")],
        user=User("北京明天会不会下雨", {"city": "北京"}, wants=["°C"]),
    )  # fmt: skip
    ev = await an.evaluate({"a": an.travel.travel_agent()}, [task], progress=False)
    found = {c.name: (c.passed, c.reason) for c in ev.records[0].checks}
    assert found["calls('search_weather', city='北京')"][0]
    assert not found["no_call()"][0] and not found["no_call() over the conversation"][0]
    assert not found["answer_contains('请告诉我')"][0]
    assert found["stops_with('user_done') over the conversation"][0]
    assert found["goal_reached()"][0] and found["turns(max=2)"][0]
    assert found["turns(min=3)"] == (False, "2 turns (at least 3)")
    assert found["asked_for('city')"][0]
    assert found["asked_for('budget')"] == (
        False,
        "the agent never asked for budget (it asked for turn 1: city)",
    )
    assert found["never_asked_twice()"][0]
    assert found["judge('asks which city') over the conversation"][0]
    transcript = judged[0]
    assert (
        "user: 明天会下雨吗？" in transcript
        and "assistant: 天气：请告诉我要查哪个城市的天气。" in transcript
    )
    assert "user: 北京。" in transcript and "user: 好的，谢谢，就这样。" in transcript


async def test_conversation_checks_on_a_task_without_a_user_say_so():
    ev = await an.evaluate({"a": an.travel.travel_agent()},
                           [an.Task("t", "北京周五天气", [an.checks.goal_reached(), an.checks.calls("search_weather", over="conversation")])],
                           progress=False)  # fmt: skip
    found = {c.name: c for c in ev.records[0].checks}
    assert found["goal_reached()"].reason.startswith("the task is not a conversation")
    assert found["calls('search_weather') over the conversation"].passed  # its one turn


async def test_a_conversation_task_set_and_its_evaluation_survive_files(tmp_path):
    tasks = an.travel.conversation_tasks()
    path = tasks.to_jsonl(tmp_path / "talks.jsonl")
    again = an.TaskSet.from_jsonl(path, trust=True)
    assert [t.to_dict() for t in again] == [t.to_dict() for t in tasks]
    assert again["talk-budget-change"].user.changes == {1: {"budget": "1300"}}
    ev = await an.evaluate(
        {"article": an.travel.travel_agent()},
        again.select(["talk-book-000", "talk-gives-up"]),
        progress=False,
    )
    ev.save(tmp_path / "ev.jsonl")
    loaded = an.Evaluation.load(tmp_path / "ev.jsonl", trust=True)
    for row in loaded.records:
        kept = ev.record(row.variant, row.task)
        assert row.stop_reason == kept.stop_reason and row.outcome == kept.outcome == "pass"
        assert [t.text for t in row.conversation.user] == [t.text for t in kept.conversation.user]


async def test_replay_executes_no_tool_asks_no_user_and_gives_the_same_verdicts(monkeypatch):
    """Acceptance: replaying a conversation evaluation: 0 live tool executions, 0 user
    regenerations, identical verdicts."""
    tasks = _tasks()
    variants = {
        "article": an.travel.travel_agent(),
        "no_clarification": an.travel.no_clarification_agent(),
    }
    ev = await an.evaluate(variants, tasks, progress=False)
    recording = an.ToolRecording.from_evaluation(ev)
    assert len(recording.replies) == 26
    ran.clear()
    asked = Counter()
    for name in ("opening", "reply", "rules_reply"):
        original = getattr(User, name)

        def spy(self, *args, _name=name, _original=original):
            asked[_name] += 1
            return _original(self, *args)

        monkeypatch.setattr(User, name, spy)
    replayed = {name: agent.replaying(recording) for name, agent in variants.items()}
    again = await an.evaluate(replayed, tasks, progress=False)
    assert sum(ran.values()) == 0 and sum(asked.values()) == 0
    assert recording.misses == [] and recording.hits == len(recording.entries)
    assert sorted((r.key, r.outcome, r.stop_reason) for r in again.records) == sorted(
        (r.key, r.outcome, r.stop_reason) for r in ev.records
    )
    assert all(t.by == "recording" for r in again.records for t in r.conversation.user)
    # each conversation reproduced its recording over every turn: the replay's verdict says so
    verdicts = [r.run.annotations["replay"] for r in again.records]
    assert all(v.faithful and v.reproduced == v.recorded for v in verdicts)
    assert sum(v.recorded for v in verdicts) == len(recording.entries)


async def test_a_diverging_agent_gets_the_documented_mismatch_where_it_parts():
    tasks = _tasks(tags=["ambiguous"]).select(["talk-which-day-flight"])
    ev = await an.evaluate({"article": an.travel.travel_agent()}, tasks, progress=False)
    recording = an.ToolRecording.from_evaluation(ev)
    # the same calls, other words: the user's recorded reply is not given to them
    english = an.travel.travel_agent(instructions=an.travel.INSTRUCTIONS + "\n请用英文回答。")
    parted = await an.evaluate({"article": english.replaying(recording)}, tasks, progress=False)
    row = parted.records[0]
    assert row.stop_reason == "mismatch"
    assert row.divergence.startswith("turn 1: the agent answered") and row.divergence.endswith(
        "(a replay mismatch of the user)"
    )
    # the replay's verdict on the record says so, and no end state is read from the recording
    assert an.evals.Replayed is not None and not row.run.annotations["replay"].faithful
    assert row.outcome == "error" and row.error == (
        f"end_state(nothing_booked) refused: the replay did not reproduce its recording: "
        f"{row.divergence}"
    )
    # a guess where the recording asked: the tool call at turn 0 is the first miss
    guess = an.travel.no_clarification_agent().replaying(recording, variant="article")
    guessed = (await an.evaluate({"guess": guess}, tasks, progress=False)).records[0]
    assert guessed.divergence.startswith("turn 0, step 0, call 0: search_flights")
    assert guessed.stop_reason == "mismatch" and guessed.outcome == "error"


async def test_the_service_runs_one_conversation_as_one_task(tmp_path):
    tasks = _tasks(tags=["ambiguous"])
    agent = an.travel.travel_agent()
    store = an.SQLiteStore(tmp_path / "s.db")
    rt = an.Runtime(agent, store=store, max_concurrency=2)
    try:
        ev = await an.evaluate({"article": agent}, tasks, runtime=rt, progress=False)
        ran.clear()
        again = await an.evaluate({"article": agent}, tasks, runtime=rt, progress=False)
    finally:
        await rt.close()
        store.close()
    assert sum(ran.values()) == 0  # every conversation kept whole: none ran again
    key = lambda r: r.key  # noqa: E731
    for a, b in zip(sorted(ev.records, key=key), sorted(again.records, key=key), strict=True):
        assert (
            (a.key, a.outcome, a.stop_reason)
            == (b.key, b.outcome, b.stop_reason)
            == (a.key, "pass", "user_done")
        )
        assert [t.text for t in a.conversation.user] == [t.text for t in b.conversation.user]


async def test_the_optimiser_runs_on_conversations():
    weak = an.travel.travel_agent(instructions="你是差旅助手。")
    with pytest.warns(an.evals.BudgetWarning, match="no candidate can be promoted"):
        opt = await an.optimize(weak, _tasks(), proposer=an.travel.TravelModel().proposer(),
                                budget=60, seed=0, progress=False)  # fmt: skip
    rows = opt.evaluation.records
    assert rows and all(r.conversation is not None for r in rows)
    assert len(opt.candidates) == 2 and opt.metric_calls <= 60
    better = opt.compare("c0", "c1")  # the held-out conversations the gate read
    assert better.improved and not better.regressed


async def test_the_outputs_grid_and_the_trajectory_diff_read_turns():
    tasks = _tasks(tags=["ambiguous"]).select(["talk-which-day-flight"])
    ev = await an.evaluate({"article": an.travel.travel_agent(), "guess": an.travel.no_clarification_agent()},
                           tasks, progress=False)  # fmt: skip
    html = ev.outputs().html()
    assert html.count("<details class='anb-turns'>") == 2 and "2 turns · user_done" in html
    assert "[rules: correct]</i> 不对，日期是周五。" in html
    diff = align(
        [
            ev.session("article", "talk-which-day-flight"),
            ev.session("guess", "talk-which-day-flight"),
        ]
    )
    shape = [(r.turn, r.status, r.user is not None) for r in diff.rows]
    assert shape == [
        (0, "same", True),
        (0, "partial", False),
        (1, "changed", True),
        (1, "same", False),
        (2, "same", True),
    ]
    assert diff.first_divergence == 1
    assert diff.payload()["rows"][2]["user"] == ["周五。", "不对，日期是周五。"]


@pytest.mark.parametrize("over", ["turn", "conversation"])
def test_a_check_read_over_the_conversation_saves_as_such(over):
    check = an.checks.calls("book_hotel", nights=2, over=over)
    again = an.checks.check_from_dict(check.to_dict())
    assert again.name == check.name and again.to_dict() == check.to_dict()
    with pytest.raises(an.ConfigurationError, match="a conversation stops"):
        an.checks.stops_with("final_answer", over="conversation")


async def test_a_rescore_reads_the_conversation_from_the_runs_in_process_and_from_the_log(
    tmp_path,
):
    """Conversation checks checked again (ev.rescore, issue 41) read the turns from the runs'
    records: never 'not a conversation' for one that was."""
    log = an.evals.ExperimentLog(tmp_path / "experiments.sqlite")
    tasks = _tasks().select(["talk-which-city", "talk-which-day-flight"])
    variants = {"article": an.travel.travel_agent(), "guess": an.travel.no_clarification_agent()}
    ev = await an.evaluate(variants, tasks, progress=False, log=log)
    checks = [an.checks.goal_reached(), an.checks.asked_for("date"), an.checks.turns(max=2)]
    reopened = an.evals.experiment(ev.experiment.id, log=log)
    for source in (ev, reopened):
        again = await source.rescore(checks=checks, log=False)
        found = {(r.variant, r.task): {c.name: c.passed for c in r.checks} for r in again.records}
        assert found[("article", "talk-which-day-flight")] == dict.fromkeys(
            ["goal_reached()", "asked_for('date')", "turns(max=2)"], True
        )
        guessed = again.record("guess", "talk-which-day-flight").checks
        assert [(c.name, c.passed) for c in guessed if not c.passed] == [
            ("asked_for('date')", False)
        ]
        assert guessed[1].reason == "the agent never asked for date (it asked for nothing)"
        assert {r.stop_reason for r in again.records} == {"user_done"}
