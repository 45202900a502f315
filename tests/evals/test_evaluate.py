"""evaluate / start: the sweep, its bounds, its failures, seeds, the cache, files."""

from __future__ import annotations

import asyncio

import pytest

import agentnb as an
from agentnb import checks
from agentnb.evals import ResponseCache, derive_seed
from agentnb.evals.runner import run_agent
from tests.helpers import eventually


def answering(text="ok", delay=0.0, log=None):
    async def reply(request):
        if log is not None:
            log.append(request)
        if delay:
            await asyncio.sleep(delay)
        return text

    return an.models.FunctionModel(reply)


TASKS = an.TaskSet(
    [an.Task(f"t{i}", f"question {i}", checks=[checks.answer_contains("ok")]) for i in range(6)]
)


async def test_every_variant_runs_every_task_and_repeat_in_sweep_order():
    ev = await an.evaluate(
        {"a": an.Agent(model=answering()), "b": an.Agent(model=answering("no"))}, TASKS, repeats=2
    )
    assert ev.done and len(ev.records) == ev.total == 24
    assert ev.variants == ["a", "b"] and ev.repeats == 2 and ev.tasks is TASKS
    runs = ev.runs
    assert list(runs.columns[:6]) == [
        "variant",
        "task",
        "repeat",
        "outcome",
        "failed_checks",
        "stop_reason",
    ]
    assert set(runs[runs.variant == "a"].outcome) == {"pass"}
    assert set(runs[runs.variant == "b"].outcome) == {"fail"}
    assert "answer_contains('ok')" in runs[runs.variant == "b"].failed_checks.iloc[0]
    first = [(r.repeat, r.task) for r in ev.records[:4]]
    assert first[0] == (0, "t0")  # repeat-major, then task: the matrix fills task by task
    assert ev.session("b", "t3", 1).messages[-1].content == "no"


async def test_concurrency_is_bounded():
    live, peak = 0, 0

    async def reply(request):
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.01)
        live -= 1
        return "ok"

    agent = an.Agent(model=an.models.FunctionModel(reply))
    ev = await an.evaluate({"a": agent, "b": agent}, TASKS, repeats=2, concurrency=3)
    assert len(ev.records) == 24 and peak == 3


async def test_a_failing_or_slow_run_is_an_error_and_the_sweep_goes_on():
    def flaky(request):
        if "question 2" in request.messages[-1]["content"]:
            raise an.ModelError("the server fell over")
        return "ok"

    slow = answering(delay=5)
    ev = await an.evaluate(
        {"flaky": an.Agent(model=an.models.FunctionModel(flaky)), "slow": an.Agent(model=slow)},
        TASKS.select(["t1", "t2"]),
        timeout=0.2,
    )
    outcome = {r.key[:2]: r for r in ev.records}
    assert outcome["flaky", "t1"].outcome == "pass"
    bad = outcome["flaky", "t2"]
    assert bad.outcome == "error" and "ModelError: the server fell over" in bad.error
    late = outcome["slow", "t1"]
    assert late.outcome == "error" and late.error == "timed out after 0.2 s"
    assert late.stop_reason == "cancelled" and ev.session("slow", "t1").is_valid
    s = ev.summary
    assert s.loc["flaky", "errors"] == 1 and s.loc["flaky", "success_rate"] == 0.5


async def test_a_check_that_raises_makes_an_error_not_a_failure():
    def broken(result):
        raise RuntimeError("bug in my check")

    ev = await an.evaluate(an.Agent(model=answering()), [an.Task("a", "x", checks=[broken])])
    record = ev.records[0]
    assert record.outcome == "error" and "check broken raised RuntimeError" in record.error
    assert record.checks[0].passed is False and "bug in my check" in record.checks[0].reason


class Seeded(an.models.Model):
    """A model with with_seed(): it answers with the seed it was given."""

    def __init__(self, seed=None, seen=None):
        self.name, self.seed, self.seen = "seeded", seed, seen if seen is not None else []

    def with_seed(self, seed):
        return Seeded(seed, self.seen)

    async def complete(self, request):
        self.seen.append(self.seed)
        return an.models.ModelResponse(an.AssistantMessage(content=f"seed {self.seed}"))


async def test_a_task_name_with_a_lone_surrogate_has_a_seed_and_runs():
    """derive_seed encoded the name strictly: a task named with a lone surrogate (JSON's
    "\\ud800" reads as one) ended the whole sweep with UnicodeEncodeError. Other names keep
    the seeds they had (the same bytes)."""
    lone = "task-\ud800"
    assert derive_seed(0, lone, 0) != derive_seed(0, "task-\udc00", 0)
    assert derive_seed(0, "article-000", 0) == 1623612292  # as on 9f180af
    assert derive_seed(7, "任务", 2) == 118309637
    agent = an.Agent(model=Seeded())
    ev = await an.evaluate({"a": agent}, [an.Task(lone, "q")], progress=False)
    (record,) = ev.records
    assert record.outcome == "pass" and record.seed == derive_seed(0, lone, 0)


async def test_each_task_and_repeat_has_its_own_seed_shared_by_every_variant():
    model = Seeded()
    agent = an.Agent(model=model)
    ev = await an.evaluate(
        {"a": agent, "b": agent.copy(instructions="other")}, TASKS, repeats=3, seed=42
    )
    for r in ev.records:
        assert r.seed == derive_seed(42, r.task, r.repeat) and r.output == f"seed {r.seed}"
    seeds = {(r.task, r.repeat): r.seed for r in ev.records if r.variant == "a"}
    assert seeds == {(r.task, r.repeat): r.seed for r in ev.records if r.variant == "b"}
    assert len(set(seeds.values())) == 18  # every (task, repeat) differs
    assert sorted(model.seen) == sorted(r.seed for r in ev.records) and model.seed is None
    again = await an.evaluate(
        {"a": agent, "b": agent.copy(instructions="other")}, TASKS, repeats=3, seed=42
    )
    cols = ["variant", "task", "repeat", "outcome", "seed", "output"]
    assert again.runs[cols].equals(ev.runs[cols])
    other = await an.evaluate({"a": agent}, TASKS, seed=43)
    assert {r.seed for r in other.records}.isdisjoint(seeds.values())


def test_an_openai_compatible_model_gets_the_seed_parameter():
    model = an.models.OpenAIModel(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-x")
    agent = an.Agent(model=model, model_params={"temperature": 0.7})
    assert run_agent(agent, 1234, 0, None).model_params == {"temperature": 0.7, "seed": 1234}
    fixed = an.Agent(model=model, model_params={"seed": 1})
    assert run_agent(fixed, 1234, 0, None).model_params == {"seed": 1}  # the user's own wins


async def test_the_cache_answers_unchanged_variants_and_keeps_repeats_apart(tmp_path):
    log = []
    a, b = an.Agent("A", model=answering(log=log)), an.Agent("B", model=answering(log=log))
    cache = ResponseCache(tmp_path / "cache.jsonl")
    ev = await an.evaluate({"a": a, "b": b}, TASKS, repeats=2, cache=cache)
    assert len(log) == 24 and cache.misses == 24 and cache.hits == 0  # repeats do not share
    log.clear()
    changed = await an.evaluate(
        {"a": a, "b": b.copy(instructions="B, changed")}, TASKS, repeats=2, cache=cache
    )
    assert len(log) == 12 and all(m.messages[0]["content"] == "B, changed" for m in log)
    assert {r.cached_calls for r in changed.records if r.variant == "a"} == {1}
    same = ["variant", "task", "repeat", "outcome", "tokens", "seed", "output"]
    assert changed.runs[same][:12].equals(ev.runs[same][:12])  # variant a, from the cache
    reread = ResponseCache(tmp_path / "cache.jsonl")  # the file holds every reply
    assert len(reread) == 36


async def test_start_returns_at_once_and_cancel_stops_the_sweep():
    heard = []
    ev = an.evals.start(
        {"a": an.Agent(model=answering(delay=0.02))}, TASKS, repeats=5, concurrency=2
    )
    ev.subscribe(heard.append)
    assert not ev.done and ev.records == []
    await eventually(lambda: len(ev.records) >= 4)
    ev.cancel()
    await ev.wait()
    assert ev.done and ev.cancelled and 4 <= len(ev.records) < ev.total
    assert heard[-1] is None and heard.count(None) == 1 and heard[:-1] == ev.records
    late = []
    ev.subscribe(late.append)
    assert late == [None]  # a subscriber after the end hears the end at once


async def test_cancelling_before_the_first_run_still_ends_the_sweep():
    heard = []
    ev = an.evals.start(an.Agent(model=answering()), TASKS)
    ev.subscribe(heard.append)
    ev.cancel()
    assert (await ev.wait()) is ev and ev.done and heard == [None] and ev.records == []


async def test_awaiting_a_started_evaluation_and_unsubscribing():
    heard = []
    ev = an.evals.start(an.Agent(model=answering()), TASKS)
    stop = ev.subscribe(heard.append)
    stop()
    assert (await ev) is ev and ev.done and len(ev.records) == 6 and heard == []


async def test_save_and_load_round_trip_with_no_model(tmp_path):
    ev = await an.evaluate(
        {"a": an.Agent(model=answering()), "b": an.Agent(model=answering("no"))}, TASKS, repeats=2
    )
    path = ev.save(tmp_path / "ev.jsonl")
    back = an.Evaluation.load(path)
    assert back.done and back.variants == ev.variants and back.repeats == 2
    assert back.tasks.to_dicts() == ev.tasks.to_dicts()
    assert back.runs.drop(columns="latency").equals(ev.runs.drop(columns="latency"))
    assert back.summary.drop(columns="mean_latency").equals(ev.summary.drop(columns="mean_latency"))
    assert back.record("b", "t1").checks == ev.record("b", "t1").checks
    assert back.session("b", "t1", 1).to_openai() == ev.session("b", "t1", 1).to_openai()
    bundle = back._repr_mimebundle_()
    assert "t5" in bundle["text/html"] and "fail" in bundle["text/html"]
    with pytest.raises(an.ConfigurationError, match="no agents"):
        await back.rerun()


async def test_rerun_runs_the_failures_again_with_the_same_seeds():
    calls = {"n": 0}

    def once_wrong(request):
        calls["n"] += 1
        return "no" if calls["n"] <= 3 else "ok"

    agent = an.Agent(model=an.models.FunctionModel(once_wrong))
    ev = await an.evaluate({"a": agent}, TASKS, concurrency=1)
    assert [r.outcome for r in ev.records].count("fail") == 3
    again = await ev.rerun()
    assert again is not ev and {r.outcome for r in again.records} == {"pass"}
    assert {r.key: r.seed for r in again.records} == {r.key: r.seed for r in ev.records}
    assert calls["n"] == 9


async def test_a_progress_line_on_stderr(capsys):
    await an.evaluate(an.Agent(model=answering()), TASKS, progress=True)
    err = capsys.readouterr().err
    assert "evaluate: 6/6 runs — 6 pass, 0 fail, 0 error\n" in err


async def test_display_falls_back_to_static_html_without_the_matrix(monkeypatch):
    """The door (agentnb.display.bundle): out of a kernel, or in one without ipywidgets, an
    evaluation shows its static HTML; in a kernel with the widgets, the live matrix."""
    import sys

    ev = await an.evaluate(an.Agent(model=answering()), TASKS)
    widget = "application/vnd.jupyter.widget-view+json"
    bundle = ev._repr_mimebundle_()
    assert widget not in bundle and "<table" in bundle["text/html"]
    monkeypatch.setattr(an.display, "in_kernel", lambda: True)
    monkeypatch.setitem(sys.modules, "agentnb.widgets", None)  # not installed
    bundle = ev._repr_mimebundle_()
    assert widget not in bundle and "<table" in bundle["text/html"]
    assert ev._repr_mimebundle_(include=["text/plain"]).keys() == {"text/plain"}


class Desk:
    """A booking desk with state: what end_state() checks after the run."""

    def __init__(self):
        self.bookings: list[str] = []

        @an.tool
        def book_hotel(city: str) -> dict:
            """Book a hotel."""
            self.bookings.append(city)
            return {"booked": city}

        self.tools = [book_hotel]


def booked_beijing(desk: Desk) -> bool | str:
    return desk.bookings == ["北京"] or f"bookings: {desk.bookings}"


def fresh_desk(agent: an.Agent) -> Desk:
    desk = Desk()
    agent.tools = desk.tools  # each run books on a desk of its own
    return desk


async def test_setup_gives_each_run_its_own_state_and_end_state_checks_it():
    def books(city):
        def reply(request):
            if request.messages[-1]["role"] == "tool":
                return "done"
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "b",
                        "type": "function",
                        "function": {"name": "book_hotel", "arguments": f'{{"city": "{city}"}}'},
                    }
                ],
            }

        return an.models.FunctionModel(reply)

    task = an.Task(
        "book", "订北京的酒店", checks=[checks.end_state(booked_beijing)], setup=fresh_desk
    )
    ev = await an.evaluate(
        {"right": an.Agent(model=books("北京")), "wrong": an.Agent(model=books("上海"))},
        [task],
        repeats=3,
    )
    outcomes = {(r.variant, r.repeat): r.outcome for r in ev.records}
    assert set(outcomes.values()) == {"pass", "fail"}
    assert all(o == ("pass" if v == "right" else "fail") for (v, _), o in outcomes.items())
    assert ev.record("wrong", "book", 2).failed_checks[0].reason == "bookings: ['上海']"


async def test_history_messages_are_placed_and_history_turns_are_run_first():
    seen = []

    def reply(request):
        seen.append([(m["role"], m.get("content")) for m in request.messages])
        return f"answer {len(seen)}"

    task = an.Task(
        "follow",
        "那周六呢？",
        history=[{"role": "system", "content": "今天是 2025-01-06"}, "周五北京天气"],
    )
    ev = await an.evaluate(an.Agent("sys", model=an.models.FunctionModel(reply)), [task])
    assert seen[0] == [("system", "sys"), ("system", "今天是 2025-01-06"), ("user", "周五北京天气")]
    assert seen[1][-3:] == [
        ("user", "周五北京天气"),
        ("assistant", "answer 1"),
        ("user", "那周六呢？"),
    ]
    assert ev.records[0].output == "answer 2" and ev.records[0].model_calls == 1


async def test_the_timeout_covers_the_earlier_turns_too():
    task = an.Task("slow-history", "now", history=["first"])
    ev = await an.evaluate(an.Agent(model=answering(delay=5)), [task], timeout=0.2)
    record = ev.records[0]
    assert record.outcome == "error" and record.error == "timed out after 0.2 s"
    assert ev.session(record.variant, "slow-history").is_valid


def test_the_cache_tells_function_models_apart():
    from agentnb.evals.cache import model_identity

    def one(request):
        return "1"

    def two(request):
        return "2"

    a, b = an.models.FunctionModel(one), an.models.FunctionModel(two)
    assert model_identity(a) != model_identity(b)
    assert model_identity(a) == model_identity(an.models.FunctionModel(one))
    secret = an.models.OpenAIModel(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-secret")
    assert "sk-secret" not in repr(model_identity(secret))


async def test_extend_runs_only_the_new_variant_and_keeps_the_rest(tmp_path):
    log = []
    first = await an.evaluate({"a": an.Agent(model=answering(log=log))}, TASKS, repeats=2)
    assert len(log) == 12
    log.clear()
    second = await first.extend({"b": an.Agent("edited", model=answering("no", log=log))})
    assert second.variants == ["a", "b"] and len(second.records) == 24 and len(log) == 12
    assert all(m.messages[0]["content"] == "edited" for m in log)  # only b ran
    assert second.session("a", "t0") is first.session("a", "t0")
    cmp = second.compare("a", "b")
    assert cmp.losses == 12 and cmp.pairs == 12
    assert second.descriptions["b"]["instructions"] == "edited"
    loaded = an.Evaluation.load(first.save(tmp_path / "first.jsonl"))
    third = await loaded.extend({"c": an.Agent(model=answering())})  # no agents for "a": kept
    assert third.variants == ["a", "c"] and len(third.records) == 24
    assert third.descriptions["a"] == first.descriptions["a"]
    with pytest.raises(an.ConfigurationError, match="already"):
        first.extend({"a": an.Agent(model=answering())})


async def test_start_keeps_runs_given_as_record_session_pairs_or_triples():
    first = await an.evaluate({"a": an.Agent(model=answering())}, TASKS)
    pairs = [(r, first.session(*r.key)) for r in first.records[:3]]
    triples = [(r, first.session(*r.key), first.trace(*r.key)) for r in first.records[3:]]
    again = await an.evals.start(
        {"a": an.Agent(model=answering("no"))}, TASKS, keep=pairs + triples
    )
    assert [r.outcome for r in again.records] == ["pass"] * 6  # nothing ran again
    assert again.trace(*first.records[5].key) is first.trace(*first.records[5].key)


async def test_an_evaluation_owns_its_state_through_add_finish_kept_and_subset():
    ev = await an.evaluate(
        {"a": an.Agent(model=answering()), "b": an.Agent(model=answering("no"))}, TASKS
    )
    heard = []
    ev.subscribe(heard.append)
    assert heard == [None]  # done already: told at once
    part = ev.subset(["b"])
    assert part.done and part.variants == ["b"] and len(part.records) == 6
    assert part.agents == {"b": ev.agents["b"]}
    record = part.records[0]
    session, trace, state = part.kept(record)
    assert session is ev.session("b", record.task) and trace is ev.trace("b", record.task)
    assert state is not None  # the run's agent: what end-state checks read with no setup
    fresh = an.Evaluation(["x"], TASKS)
    fresh.subscribe(heard.append)
    fresh.add(record)  # a record with nothing kept
    assert fresh.kept(record) == (None, None, None) and heard[-1] is record
    fresh.finish()
    fresh.finish()  # once only
    assert fresh.done and heard.count(None) == 2
