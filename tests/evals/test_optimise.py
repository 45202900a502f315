"""The optimiser on the stand-in: it improves a weak prompt within the budget, reproducibly,
the gate holds what only fits the training tasks, the budget is never exceeded, Stop keeps
what was proven, and every proposer reply is either a candidate or a step that says why not."""

from __future__ import annotations

import asyncio
import json

import pytest

import agentnb as an
from agentnb.errors import ConfigurationError
from agentnb.evals.optimise import BudgetWarning, Candidate, Optimisation, Texts, split
from agentnb.evals.optimise.front import front, select_parent
from agentnb.models import FunctionModel
from agentnb.session import RunRecord
from agentnb.travel import INSTRUCTIONS, TravelModel

WEAK = "你是差旅助手。"
ALTERNATIVE = "预算不足时需要向用户说明原因，并给出备选方案。\n"


def weak_agent():
    """A deliberately weak prompt on a model prone to answering from memory."""
    return an.travel.travel_agent(model=TravelModel("fabricate"), instructions=WEAK)


async def _optimize(**options):
    options.setdefault("proposer", TravelModel().proposer())
    options.setdefault("progress", False)
    return await an.optimize(weak_agent(), an.travel.task_set(), **options)


async def test_a_weak_prompt_improves_on_held_out_tasks_within_150_metric_calls():
    opt = await _optimize(budget=150, seed=0)
    seed, best = opt.candidates[0], opt.best
    assert opt.metric_calls <= 150
    assert best.id != "c0" and best.status == "promoted"
    assert best.gate["promoted"] and best.gate["p"] < 0.05 and best.gate["wins"] > 0
    assert best.validation - seed.validation >= 0.3, (seed.validation, best.validation)
    # every promotion was decided within the budget, and the proposer never saw validation
    assert best.decided_at <= 150
    for step in opt.steps:
        assert not set(step.get("minibatch") or ()) & set(opt.validation.names)
    # the lineage reaches back to the seed, each step a diff that adds one line
    chain = opt.lineage()
    assert chain[0] == "c0" and chain[-1] == best.id
    rows = opt.diff(best.id)["instructions"]
    assert [r["op"] for r in rows if r["op"] != "same"] == ["added"]
    # the proposer is metered apart: no metric call, a price of 0 (the stand-in)
    assert opt.proposer_calls >= 2 and opt.proposer_spend == 0.0
    assert opt.spend == 0.0 and "apart, not metric calls" in opt.summary()
    # the comparison the gate read, public: the held-out runs of both, paired
    read = opt.compare("c0", best.id)
    assert (read.wins, read.losses, read.mcnemar_p) == (
        best.gate["wins"],
        best.gate["losses"],
        best.gate["p"],
    )
    assert read.pairs == len(opt.validation.names) * opt.repeats
    with pytest.raises(KeyError, match="no candidate 'c99'"):
        opt.compare("c0", "c99")


async def test_one_seed_reproduces_the_whole_run():
    first, again = await _optimize(budget=120, seed=3), await _optimize(budget=120, seed=3)
    assert first.steps == again.steps
    assert [c.to_dict() for c in first.candidates] == [c.to_dict() for c in again.candidates]
    other = await _optimize(budget=120, seed=4)
    assert other.validation.names != first.validation.names  # the seed picks the split too


async def test_a_candidate_that_wins_on_training_but_not_on_validation_is_not_promoted():
    """Split so that it must: the training tasks are the over-budget ones, where the
    alternative line matters; on the held-out tasks it changes no answer."""
    tasks = an.travel.task_set()
    over = [t for t in tasks if "over_budget" in t.tags]
    rest = an.TaskSet([t for t in tasks if "over_budget" not in t.tags][:16])
    agent = an.travel.travel_agent(instructions=INSTRUCTIONS.replace(ALTERNATIVE, ""))
    # the agent as given passes every held-out task: said once it ran, before any proposal
    with pytest.warns(BudgetWarning, match="already passes 16 of 16 validation tasks: none is"):
        opt = await an.optimize(
            agent,
            an.TaskSet(over),
            validation=rest,
            proposer=TravelModel().proposer(),
            budget=60,
            minibatch=2,
            progress=False,
        )
    assert "so no candidate can be promoted on these tasks however good" in opt.warnings[0]
    assert opt.best_unproven is None  # held, but no better than c0 on the held-out tasks
    gated = [c for c in opt.candidates if c.gate is not None]
    assert gated, opt.history
    child = gated[0]
    assert "备选方案" in child.texts.instructions
    assert child.train_success > opt.candidates[0].train_success  # it wins on training
    assert child.status == "held" and not child.gate["promoted"]
    assert child.gate["wins"] == child.gate["losses"] == 0
    assert opt.best.id == "c0", "the incumbent stays what the held-out tasks proved"
    assert "no evidence of a difference" in child.reason


def test_a_budget_too_small_warns_before_the_run_and_one_below_the_start_is_refused():
    async def go(budget):
        return await _optimize(budget=budget, seed=0)

    with pytest.warns(BudgetWarning, match="allows 1 proposal to reach the gate") as caught:
        opt = asyncio.run(go(80))
    message = str(caught[0].message)
    assert "20 validation tasks, 19 training tasks, minibatch 4" in message
    assert "at least 117" in message and opt.warnings == [message]
    with pytest.raises(ConfigurationError, match="cannot pay for the start"):
        asyncio.run(go(30))


async def test_a_validation_set_too_small_for_the_gate_is_said_before_the_run():
    """Five held-out tasks, one repeat: five wins and no loss give p = 0.0625, so the gate can
    never promote; the run said nothing and spent its budget (the hostile test's H4)."""
    tasks = an.travel.task_set()
    held = an.TaskSet(list(tasks)[:5], name="held")
    train = an.TaskSet(list(tasks)[5:15], name="train")
    with pytest.warns(BudgetWarning, match="with 5 validation tasks the gate can never promote"):
        opt = await an.optimize(
            weak_agent(),
            train,
            validation=held,
            proposer=TravelModel().proposer(),
            budget=60,
            progress=False,
        )
    assert any("at least 6 validation tasks (repeats do not add tasks" in w for w in opt.warnings)
    assert len(opt.warnings) == 1  # not said twice once the seed ran
    summary = opt.summary()
    assert "warning: with 5 validation tasks" in summary
    held = [c for c in opt.candidates if c.status == "held" and c.validation > opt.best.validation]
    for c in held:  # a candidate better on the held-out tasks is named, with why it was held
        assert f"held back: {c.id}" in summary and "the exact test needs 6 to tell" in summary


@pytest.mark.parametrize("budget", [39, 45, 61, 97])
async def test_the_budget_is_never_exceeded(budget, recwarn):
    opt = await _optimize(budget=budget, seed=1)
    assert opt.metric_calls <= budget
    assert len(opt.evaluation.records) == opt.metric_calls
    assert opt.stop_reason.startswith(("budget spent", "nothing new", "every training"))


async def test_stop_keeps_what_was_proven_so_far():
    opt = an.evals.optimise.start(
        weak_agent(), an.travel.task_set(), proposer=TravelModel().proposer(), budget=300
    )
    promoted = asyncio.Event()

    def on(kind, data):
        if kind == "candidate" and data.status == "promoted":
            promoted.set()
        if kind == "run" and promoted.is_set() and not opt.cancelled:
            opt.cancel()  # in the middle of the next candidate's runs

    opt.subscribe(on)
    await opt.wait()
    assert opt.cancelled and opt.done and "stopped by request" in opt.stop_reason
    assert opt.best.status == "promoted" and opt.metric_calls < 300
    stopped = [c for c in opt.candidates if c.status == "stopped"]
    assert stopped and all(c.reason for c in stopped)
    # drawn where it was stopped (the view's chart put it at 0 metric calls)
    assert all(c.decided_at == opt.metric_calls for c in stopped)
    assert opt.evaluation.done


def _proposer(replies):
    replies = iter(replies)

    def reply(request):
        text = next(replies)
        if isinstance(text, Exception):
            raise text
        return text

    return FunctionModel(reply, name="scripted-proposer")


async def test_a_proposer_that_fails_every_call_is_said_so_not_out_of_ideas():
    """A bad API key read as 'the proposer has run out of ideas' (the hostile test's M5)."""
    down = [RuntimeError("401 Unauthorized: bad API key")] * 10
    opt = await _optimize(proposer=_proposer(down), budget=150, seed=0, patience=3)
    assert opt.stop_reason == (
        "nothing new in 3 steps in a row (patience=3): the proposer never answered usefully: "
        "failed: RuntimeError: 401 Unauthorized: bad API key"
    )


async def test_every_reply_is_a_candidate_or_a_step_that_says_why_not():
    line = "Output rules: the final answer lists flight number and times, fare and price."
    replies = [
        "I think the prompt is fine.",  # no JSON, no code block
        json.dumps({"rationale": "nothing to change", "instructions": WEAK}),
        json.dumps({"rationale": "x", "tools": {"no_such_tool": "text"}}),
        RuntimeError("the proposer's server is down"),
        f"Here it is:\n```\n{WEAK}\n{line}\n```\nI added output rules.",
    ] + ["{}"] * 20
    opt = await _optimize(proposer=_proposer(replies), budget=150, seed=0, patience=5)
    events = [(s["event"], s["reason"]) for s in opt.steps]
    assert events[0] == (
        "no_proposal",
        "the reply holds no JSON object with instructions or tools, and no code block",
    )
    assert events[1] == ("no_proposal", "the reply changes nothing")
    assert events[2][0] == "no_proposal" and "changes nothing" in events[2][1]
    assert events[3] == (
        "no_proposal",
        "the proposer failed: RuntimeError: the proposer's server is down",
    )
    child = opt.candidates[1]  # the code block, read as the new instructions
    assert child.texts.instructions.endswith(line) and "I added output rules" in child.rationale
    # the optimiser's note stays apart from the proposer's words (it may write another language)
    assert "read the code block" in child.note and "read the code block" not in child.rationale
    assert child.to_dict()["note"] == child.note
    assert child.status == "rejected"  # a fabricating model ignores output rules
    assert opt.stop_reason.startswith("nothing new in 5 steps")
    # none of the replies that were no proposal cost a metric call
    assert sum(s.get("metric_calls") or 0 for s in opt.steps) + 39 == opt.metric_calls


async def test_save_and_load_keep_texts_history_and_runs(tmp_path):
    opt = await _optimize(budget=120, seed=0)
    path = opt.save(tmp_path / "opt.jsonl")
    back = Optimisation.load(path)
    assert back.best_id == opt.best_id and back.metric_calls == opt.metric_calls
    assert back.steps == json.loads(json.dumps(opt.steps))
    assert [c.texts for c in back.candidates] == [c.texts for c in opt.candidates]
    assert len(back.evaluation.records) == len(opt.evaluation.records)
    assert back.history.shape == opt.history.shape and back.proposer_calls == opt.proposer_calls
    assert back.diff(back.best_id) == opt.diff(opt.best_id)
    agent = back.best.agent(an.travel.travel_agent())
    assert agent.instructions == opt.best.texts.instructions
    with pytest.raises(ConfigurationError, match="keeps texts, not agents"):
        _ = back.best_agent
    (tmp_path / "not.jsonl").write_text('{"format": "x"}\n')
    with pytest.raises(ConfigurationError, match="not a saved optimisation"):
        Optimisation.load(tmp_path / "not.jsonl")


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda h: h["settings"].update(temperature=0.3), "unknown setting 'temperature'"),
        (lambda h: h["candidates"][1].pop("texts"), "candidate 1 has no texts"),
        (lambda h: h["train"].append("no-such-task"), "name 'no-such-task', which the file's"),
        (lambda h: h.update(best="c99"), "its incumbent 'c99' is not one of its candidates"),
        (lambda h: h.update(candidates="c0"), "'candidates' is not a list"),
        (lambda h: h["candidates"][0].update(flavour=1), "candidate 0 cannot be read"),
    ],
    ids=["setting", "texts", "task", "incumbent", "candidates", "field"],
)
async def test_a_damaged_optimisation_file_is_refused_saying_what_is_wrong(tmp_path, damage, said):
    """An unknown setting, a candidate without texts or an unknown task raised a bare
    TypeError / KeyError (L3): the file's error, with its line and what is wrong."""
    opt = await _optimize(budget=150, seed=0, patience=1)
    assert len(opt.candidates) >= 2
    path = opt.save(tmp_path / "opt.jsonl")
    lines = path.read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    damage(header)
    path.write_text("\n".join([json.dumps(header, ensure_ascii=False), *lines[1:]]), "utf-8")
    with pytest.raises(an.ConfigurationError, match=r"opt\.jsonl:1: the optimisation") as e:
        Optimisation.load(path)
    assert said in str(e.value)


def test_the_front_keeps_each_task_best_and_draws_by_tasks_won():
    def cand(cid, **scores):
        c = Candidate(cid, Texts(cid))
        c.scores = scores
        return c

    a = cand("a", t1=1.0, t2=0.0, t3=0.5)
    b = cand("b", t1=0.0, t2=1.0, t3=0.5)
    c = cand("c", t1=0.5, t2=0.5, t3=0.4)  # best on no task
    d = cand("d", t1=1.0, t2=0.0, t3=0.5)  # the same as a: the older stays
    tasks = ["t1", "t2", "t3"]
    assert front([a, b, c, d], tasks) == {"a": 2, "b": 2}
    import random

    rng = random.Random(0)
    drawn = [select_parent([a, b, c, d], tasks, rng) for _ in range(400)]
    assert set(drawn) == {"a", "b"} and 150 < drawn.count("a") < 250


def test_the_split_is_stratified_seeded_and_checked():
    tasks = an.travel.task_set()
    train, val = split(tasks, 0.5, seed=0)
    assert set(train.names).isdisjoint(val.names) and len(train) + len(val) == len(tasks)
    assert abs(len(val) - len(tasks) / 2) <= 1
    for tag in ("zh", "en", "over_budget", "dates"):
        mine = [t for t in tasks if tag in t.tags]
        held = [t for t in mine if t.name in val.names]
        assert abs(len(held) - len(mine) / 2) <= 1, tag  # each kind on both sides
    assert split(tasks, 0.5, seed=0)[1].names == val.names
    with pytest.raises(ConfigurationError, match="both training and validation"):
        asyncio.run(
            an.optimize(weak_agent(), tasks, validation=tasks, proposer=TravelModel().proposer())
        )
    with pytest.raises(ConfigurationError, match="proposer must be an agentnb model"):
        asyncio.run(an.optimize(weak_agent(), tasks, proposer="gpt"))


async def test_the_response_cache_and_tool_replay_make_re_evaluations_cheap():
    tasks = an.travel.task_set()
    cache = an.evals.ResponseCache()
    first = await _optimize(budget=120, seed=0, cache=cache)
    misses = cache.misses
    again = await _optimize(budget=120, seed=0, cache=cache)
    assert again.steps == first.steps and cache.misses == misses  # every reply from the cache
    assert all(r.cached_calls > 0 and r.prompt_tokens == 0 for r in again.evaluation.records)
    # tools answered from a recording of the article agent's runs (live only where it misses)
    live = await an.evaluate({"article": an.travel.travel_agent()}, tasks, progress=False)
    recording = an.ToolRecording.from_evaluation(live)
    replaying = weak_agent().replaying(
        recording, match="arguments", missing="live", variant="article"
    )
    opt = await an.optimize(
        replaying, tasks, proposer=TravelModel().proposer(), budget=120, progress=False
    )
    assert opt.best.texts == first.best.texts and opt.best.validation == first.best.validation
    assert opt.agent(opt.best_id).replay is not None  # every candidate keeps the replay


async def test_a_proposed_tool_description_becomes_the_candidates_tool():
    new = "查询航班。日期一律用 YYYY-MM-DD。"
    reply = json.dumps({"rationale": "dates", "tools": {"search_flights": new}})
    opt = await _optimize(proposer=_proposer([reply] + ["{}"] * 10), budget=120, patience=2)
    child = opt.candidates[1]
    assert child.texts.tools["search_flights"] == new and child.texts.instructions == WEAK
    agent = opt.agent(child.id)
    assert next(t for t in agent.tools if t.name == "search_flights").description == new
    assert opt.diff(child.id)["tools"]["search_flights"]
    assert opt.evaluation.descriptions[child.id]["tools"]["search_flights"] == new


async def test_the_bootstrap_gate_promotes_on_an_interval_above_zero():
    opt = await _optimize(budget=150, seed=0, gate="bootstrap")
    promoted = [c for c in opt.candidates if c.status == "promoted"]
    assert promoted and all(c.gate["ci"][0] > 0 for c in promoted)
    assert all(c.gate["ci"][0] <= 0 for c in opt.candidates if c.status == "held")
    with pytest.raises(ConfigurationError, match="gate must be one of"):
        await _optimize(gate="t-test")


async def test_the_plot_draws_the_incumbent_and_the_candidates():
    import matplotlib

    matplotlib.use("Agg")
    opt = await _optimize(budget=120, seed=0)
    fig = opt.plot()
    ax = fig.axes[0]
    assert ax.get_xlim() == (0, 120) and ax.get_xlabel() == "metric calls"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "incumbent, validation success" in labels and any("promoted" in x for x in labels)
    import matplotlib.pyplot as plt

    plt.close(fig)


async def test_a_setup_where_every_run_errors_stops_at_once_and_says_why():
    def broken(request):
        raise RuntimeError("the model's server refused the key")

    agent = an.travel.travel_agent(model=FunctionModel(broken, name="broken"))
    opt = await an.optimize(
        agent, an.travel.task_set(), proposer=TravelModel().proposer(), budget=120, progress=False
    )
    assert opt.metric_calls == 39 and opt.proposer_calls == 0
    assert opt.stop_reason.startswith("every run of the agent as given was an error")
    assert "refused the key" in opt.stop_reason


async def test_repeats_pair_by_task_and_repeat_and_keep_the_budget():
    agent = an.travel.travel_agent(
        model=TravelModel("fabricate", temperature=0.5), instructions=WEAK
    )
    opt = await an.optimize(
        agent, an.travel.task_set(), proposer=TravelModel().proposer(), budget=240, repeats=2,
        progress=False,
    )  # fmt: skip
    assert opt.metric_calls <= 240 and len(opt.evaluation.records) == opt.metric_calls
    seed = opt.candidates[0]
    assert seed.calls == 78 and all(0 <= v <= 1 for v in seed.scores.values())
    gated = [c for c in opt.candidates if c.gate]
    assert all(c.gate["pairs"] == 2 * len(opt.validation) for c in gated)


async def test_a_timeout_of_zero_or_less_is_refused_not_read_as_no_limit():
    """timeout=0 and -1 ran with no limit at all (the hostile test's M6)."""
    for bad in (0, -1):
        with pytest.raises(ConfigurationError, match="timeout must be a positive number"):
            await _optimize(budget=150, timeout=bad)
        with pytest.raises(ConfigurationError, match="timeout must be a positive number"):
            await an.evaluate({"a": weak_agent()}, an.travel.task_set(), timeout=bad)


def _ended(candidates=1, gated=0, alpha=0.05, calls=1, proposer_calls=1, tokens=1):
    """A finished optimisation with these counts (no run needed to word its summary)."""
    tasks = list(an.travel.task_set())
    opt = Optimisation(None, an.TaskSet(tasks[:4]), an.TaskSet(tasks[4:8]), alpha=alpha)
    for i in range(candidates):
        c = Candidate(f"c{i}", Texts(f"text {i}"), None if i == 0 else "c0")
        c.gate = {"p": 0.5, "verdict": "no evidence of a difference"} if 0 < i <= gated else None
        opt.candidates.append(c)
    opt.metric_calls, opt.budget = calls, max(calls, 1)
    run = {"run_id": "r-1", "trace_id": "t", "input": None, "stage": "check_stop"}
    usage = {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens}
    opt.proposer_runs = [RunRecord.from_dict({**run, "iterations": proposer_calls, "usage": usage})]
    return opt


@pytest.mark.parametrize(
    ("gated", "alpha", "said"),
    [
        (0, 0.05, "none gated, so none promoted"),
        (1, 0.05, "1 gated, a test at α = 0.05: at most a 5% chance that a promotion is no"),
        (2, 0.05, "2 gated, each a test at α = 0.05: at most a 10% chance (2 × 0.05) that any"),
        (3, 0.01, "3 gated, each a test at α = 0.01: at most a 3% chance (3 × 0.01) that any"),
        (2, 0.001, "2 gated, each a test at α = 0.001: at most a 0.2% chance (2 × 0.001)"),
        (25, 0.05, "25 gated, each a test at α = 0.05: 25 × 0.05 ≥ 1 bounds nothing"),
    ],
)
def test_the_summary_says_what_the_gates_bound_in_words_that_read_right(gated, alpha, said):
    """'2 gated (… 10% … : 2 × α = 0.05)' read as 2α = 0.05, and 0 gated printed 'at most 0%
    … : 0 × α = 0.05' (the hostile test's L1)."""
    first = _ended(candidates=gated + 1, gated=gated, alpha=alpha).summary().split("\n")[0]
    assert said in first
    assert "0 ×" not in first and "0%" not in first.replace("10%", "")


def test_counts_of_one_are_singular_in_the_optimisers_messages(capsys):
    """'a budget of 1 metric calls', '1 candidates', 'the proposer 1 calls' (the hostile
    test's L2)."""
    from agentnb.evals.optimise import budget_plan
    from agentnb.evals.optimise.start import Progress

    with pytest.raises(ConfigurationError) as refused:
        budget_plan(1, 6, 6, 4, 1)
    assert "a budget of 1 metric call cannot pay" in str(refused.value)
    assert "6 validation × 1 repeat = 12" in str(refused.value)
    warned = budget_plan(40, 19, 1, 4, 1).warning
    assert (
        "with 1 validation task the gate" in warned
        and "even 1 task won and none lost gives" in (warned)
    )
    warned = budget_plan(40, 19, 1, 4, 1, gate="pairs").warning
    assert "with 1 validation task × 1 repeat" in warned and "even 1 win and no loss" in warned
    opt = _ended()
    opt.cancelled = True
    opt.finish("stopped")
    summary = opt.summary()
    assert opt.stop_reason == "stopped by request after 1 metric call"
    assert "1/1 metric calls, 1 candidate, none gated" in summary
    assert "the proposer 1 call, 1 token," in summary
    assert "1 candidate>" in repr(opt)
    Progress(opt)("end", opt.stop_reason)
    assert "1 candidate · proposer 1 call\n" in capsys.readouterr().err
    from agentnb.widgets.optimise import state

    assert state(opt)["proposer"].startswith("1 call, 1 token, ")


@pytest.mark.parametrize("missing", [0, 1])
async def test_a_stop_after_a_candidates_validation_runs_still_gates_it_from_them(missing):
    """Stopped when every validation run of a candidate had finished, it was marked
    'stopped' and its gate thrown away (the hostile test's L6). With every run it is gated
    from them, with no new run; with one missing it stays 'stopped'."""
    opt = an.evals.optimise.start(
        weak_agent(), an.travel.task_set(), proposer=TravelModel().proposer(), budget=150
    )
    held_out = set(opt.validation.names)
    at: list[int] = []

    def on(kind, data):
        if kind != "run" or data.variant == "c0" or data.task not in held_out or at:
            return
        mine = [r for r in opt.evaluation.records if r.variant == data.variant]
        if sum(r.task in held_out for r in mine) == len(held_out) - missing:
            at.append(opt.metric_calls)
            opt.cancel()

    opt.subscribe(on)
    await opt.wait()
    child = opt.candidates[-1]
    assert (
        at and opt.cancelled and opt.stop_reason == f"stopped by request after {at[0]} metric calls"
    )
    assert opt.metric_calls == at[0] == len(opt.evaluation.records) <= 150  # nothing after it
    keys = [(r.variant, r.task, r.repeat) for r in opt.evaluation.records]
    assert len(keys) == len(set(keys))  # nothing counted twice
    if missing:
        assert child.status == "stopped" and child.gate is None and child.validation is None
        assert opt.best_id == "c0"
        return
    assert child.status in ("promoted", "held") and child.gate["pairs"] == len(held_out)
    assert child.reason.endswith("; decided after the stop, from its runs")
    assert opt.steps[-1]["event"] == child.status and opt.steps[-1]["candidate"] == child.id
    assert opt.best_id == (child.id if child.status == "promoted" else "c0")
    assert f"{opt.gated} gated" in opt.summary()


async def test_the_seed_s_validation_passes_warn_before_any_proposal_when_none_can_be_promoted():
    """Issue 36: 13 tasks, 7 held out, the agent as given passing 4 of them: at most 3 can
    flip (p >= 0.25), so no candidate could ever be promoted, and nothing said so before the
    budget was spent; the strongest held candidate could not be had either."""
    from tests.evals.optimise_agents import careful, toy, toy_sets

    train, held = toy_sets()
    events: list[tuple[str, int]] = []
    said = (
        "the agent as given already passes 4 of 7 validation tasks: at most 3 can flip to a win, "
        "and 3 won with none lost give p = 0.25 ≥ α = 0.05, so no candidate can be promoted"
    )
    with pytest.warns(BudgetWarning, match=said) as caught:
        opt = an.evals.optimise.start(toy(), train, validation=held, proposer=careful(), budget=40)
        opt.subscribe(lambda kind, data: events.append((kind, opt.metric_calls)))
        await opt
    assert len(caught) == 1 and opt.warnings == [str(caught[0].message)]
    kinds = [k for k, _ in events]
    at = kinds.index("warning")
    assert events[at][1] == 13, "said once the start ran, before anything else was spent"
    assert not {"proposal", "step"} & set(kinds[:at])
    c1 = opt.candidate("c1")
    assert c1.status == "held" and c1.gate["p"] == pytest.approx(0.25) and opt.best.id == "c0"
    assert c1.gate["method"] == "tasks" and (c1.gate["wins"], c1.gate["losses"]) == (3, 0)
    assert opt.best_unproven is c1 and c1.texts.instructions.endswith("Be careful.")
    assert "held back: c1 (validation 100%, opt.best_unproven)" in opt.summary()
    # three identical repeats of each run are not new evidence: the same warning, the same gate
    with pytest.warns(BudgetWarning, match=r"passes 4 of 7 validation tasks \(every repeat\)"):
        thrice = await an.optimize(
            toy(), train, validation=held, proposer=careful(), budget=120, repeats=3, progress=False
        )
    gate = thrice.candidate("c1").gate
    assert gate["p"] == pytest.approx(0.25) and not gate["promoted"] and gate["repeats_identical"]
    assert "every task's 3 repeats were identical (a deterministic model)" in gate["verdict"]
    # the per-pair McNemar gate, asked for by name, counts the 9 identical pairs as evidence,
    # promotes, and its verdict says what it assumed and that the repeats were identical
    pairs = await an.optimize(
        toy(), train, validation=held, proposer=careful(), budget=120, repeats=3,
        gate="pairs", progress=False,
    )  # fmt: skip
    gate = pairs.candidate("c1").gate
    assert gate["promoted"] and gate["p"] == pytest.approx(2 * 0.5**9) and pairs.best.id == "c1"
    assert "assuming the 3 repeats of a task independent" in gate["verdict"]
    assert gate["verdict"].endswith("counted each task 3 times: over tasks, p = 0.25")
    assert pairs.warnings == [] and pairs.best_unproven is None


async def test_the_former_gate_name_mcnemar_is_the_per_pair_gate():
    from tests.evals.optimise_agents import careful, toy, toy_sets

    train, held = toy_sets()
    opt = await an.optimize(
        toy(), train, validation=held, proposer=careful(), budget=120, repeats=3,
        gate="mcnemar", progress=False,
    )  # fmt: skip
    assert opt.gate == "pairs" and opt.best.id == "c1"
    assert opt.compare("c0", "c1").test == "pairs"
