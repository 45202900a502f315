"""A saved run as a regression test: replay passes on an unchanged runtime, names changes."""

from __future__ import annotations

import importlib

import pytest

import agentnb as an
from agentnb.storage.trace import Trace


async def saved_run():
    return None, await an.travel.travel_agent().run(an.travel.ARTICLE_REQUESTS["000"])


async def test_an_unchanged_agent_replays_exactly():
    _, result = await saved_run()
    report = await an.testing.replay(result.session, an.travel.travel_agent())
    assert report.ok, report
    assert report.model_calls == 5 and report.session.to_openai() == result.session.to_openai()
    await an.testing.assert_replays(result.session, an.travel.travel_agent())


async def test_replay_from_a_saved_trace_file(tmp_path):
    _, result = await saved_run()
    path = result.trace.save(tmp_path / "run.jsonl")
    report = await an.testing.replay(Trace.load(path), an.travel.travel_agent())
    assert report.ok, report
    report = await an.testing.replay(result, an.travel.travel_agent())  # a RunResult too
    assert report.ok, report


async def test_a_prompt_change_is_reported_at_every_request():
    _, result = await saved_run()
    changed = an.travel.travel_agent(instructions="你是差旅助手。")
    report = await an.testing.replay(result.session, changed)
    assert not report.ok
    assert {d.what for d in report.differences} == {"instructions changed"}
    assert [d.where for d in report.differences] == [f"request {i}" for i in range(5)]
    with pytest.raises(AssertionError, match="instructions changed"):
        await an.testing.assert_replays(result.session, changed)


async def test_a_tool_schema_change_is_reported():
    _, result = await saved_run()
    vaguer = an.travel.travel_agent().copy(descriptions={"search_weather": "天气"})
    report = await an.testing.replay(result.session, vaguer)
    assert {d.what for d in report.differences} == {"tool search_weather: description changed"}
    first = report.differences[0]
    assert first.actual == "天气" and first.expected and first.expected != "天气"
    assert first.expected[:20] in str(first)  # before and after, not two identical name lists


async def test_a_runtime_change_in_tool_results_is_reported(monkeypatch):
    _, result = await saved_run()
    tool = importlib.import_module("agentnb.tools.tool")  # the module, not the decorator

    original = tool.serialise  # how a tool's value becomes the model's text (tool.serialise)

    def changed(value, limit=None):
        content, note = original(value, limit)
        return content.replace("880", "990"), note

    monkeypatch.setattr(tool, "serialise", changed)
    report = await an.testing.replay(result.session, an.travel.travel_agent())
    contents = [d for d in report.differences if d.what == "tool content changed"]
    assert contents and contents[0].where == "message 2" and "990" in contents[0].actual


async def test_a_stop_policy_change_is_reported_as_missing_messages():
    _, result = await saved_run()
    strict = an.travel.travel_agent(max_iterations=2, final_answer_on_stop=False)
    report = await an.testing.replay(result.session, strict)
    whats = [d.what for d in report.differences]
    assert "missing in the replay" in whats and "fewer model calls than recorded" in whats


async def test_tools_recorded_replays_without_running_the_tools():
    _, result = await saved_run()
    desk = an.travel.TravelTools(faults={"search_weather": "upstream_error"})
    broken = an.travel.travel_agent(tools=desk)
    live = await an.testing.replay(result.session, broken)
    assert not live.ok  # the live weather tool now fails upstream
    recorded = await an.testing.replay(result.session, broken, tools="recorded")
    assert recorded.ok, recorded


async def test_a_saved_evaluation_keeps_traces_to_replay_after_loading(tmp_path):
    tasks = an.travel.task_set(tags=["article"])
    ev = await an.evaluate({"article": an.travel.travel_agent()}, tasks)
    with_traces = ev.save(tmp_path / "ev.jsonl")
    lean = ev.save(tmp_path / "lean.jsonl", traces=False)
    assert lean.stat().st_size < with_traces.stat().st_size
    back = an.Evaluation.load(with_traces)
    trace = back.trace("article", "article-000")
    assert len(trace) == len(ev.trace("article", "article-000"))
    assert (await an.testing.replay(trace, an.travel.travel_agent())).ok
    changed = await an.testing.replay(trace, an.travel.travel_agent(instructions="你是差旅助手。"))
    assert {d.what for d in changed.differences} == {"instructions changed"}
    with pytest.raises(KeyError, match="kept no trace"):
        an.Evaluation.load(lean).trace("article", "article-000")
