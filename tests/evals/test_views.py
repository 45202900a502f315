"""An evaluation is a view over ``session.runs``: every figure its tables show is read from the
runs' records (tagged with their row, annotated with their checks), nothing is copied, and
files (this format and the previous one) are exports of those records."""

from __future__ import annotations

import ast
import asyncio
import json
import math
from pathlib import Path

import pytest

import agentnb as an
from agentnb.evals.batches import batches
from agentnb.evals.cost import spent
from agentnb.messages import AssistantMessage
from agentnb.models import FunctionModel, ModelResponse, Usage

PACKAGE = Path(an.__file__).parent
DATA = Path(__file__).parent / "data"


@an.tool
def weather(city: str) -> dict[str, str]:
    """Weather in a city."""
    if city == "nowhere":
        raise ValueError("no such city")
    return {"city": city, "sky": "晴"}


def _call(city: str) -> AssistantMessage:
    arguments = json.dumps({"city": city})
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": arguments}}
    return AssistantMessage.model_validate(
        {"role": "assistant", "content": None, "tool_calls": [call]}
    )


async def _reply(request):
    last = request.messages[-1]
    text = str(last.get("content"))
    if "slow" in text:
        await asyncio.sleep(1.0)
    if last["role"] == "user" and "weather" in text:
        return ModelResponse(_call("nowhere" if "nowhere" in text else "北京"), Usage(40, 8, 48))
    if "quiet" in text:
        return ModelResponse(AssistantMessage(content="北京 晴"))  # no usage: estimated
    return ModelResponse(AssistantMessage(content="北京 晴"), Usage(30, 4, 34))


TASKS = an.TaskSet(
    [
        an.Task("tool", "weather in 北京", checks=[an.checks.answer_contains("晴")]),
        an.Task(
            "bad",
            "weather in nowhere",
            checks=[an.checks.answer_contains("晴"), an.checks.no_tool_errors()],
        ),
        an.Task(
            "turns",
            "and now?",
            history=("hello", {"role": "assistant", "content": "hi"}),
            checks=[an.checks.answer_contains("北京")],
        ),
        an.Task("slow", "slow please", checks=[an.checks.answer_contains("x")]),
        an.Task("quiet", "quiet please", checks=[an.checks.answer_contains("晴")]),
    ]
)


@pytest.fixture
def priced():
    an.evals.prices["views-model"] = (1.0, 2.0)
    yield
    del an.evals.prices["views-model"]


async def _evaluation() -> an.Evaluation:
    agent = an.Agent("be brief", [weather], model=FunctionModel(_reply, name="views-model"))
    variants = {"a": agent, "b": agent.copy(instructions="be very brief")}
    cache = an.evals.ResponseCache()
    await an.evaluate({"a": agent}, TASKS, cache=cache, timeout=0.5, progress=False)
    return await an.evaluate(variants, TASKS, repeats=2, cache=cache, timeout=0.5, progress=False)


def _same(shown: object, value: object) -> bool:
    """A table's cell and the record's value: None is shown as NaN (or None)."""
    if value is None:
        return shown is None or (isinstance(shown, float) and math.isnan(shown))
    return bool(shown == value) or shown == pytest.approx(value)


def _snapshot(ev: an.Evaluation) -> list[str]:
    return [json.dumps(r.to_dict(), default=str) for row in ev.records for r in row.runs]


async def test_every_figure_a_table_shows_is_read_from_the_run_records(priced):
    ev = await _evaluation()
    before = _snapshot(ev)
    frame = ev.runs.set_index(["variant", "task", "repeat"])
    summary = ev.summary
    for row in ev.records:
        session = ev.session(row.variant, row.task, row.repeat)
        tags = {"variant": row.variant, "task": row.task, "repeat": str(row.repeat)}
        runs = [r for r in session.runs if {k: r.tags[k] for k in tags} == tags]
        task_run = row.run
        if task_run.start is not None:  # a run that held the session is in it, not a copy
            assert runs[-1] is task_run
        else:
            runs.append(task_run)
        found = task_run.annotations["checks"]
        shown = frame.loc[row.key]
        assert shown["outcome"] == found.outcome and shown["error"] == found.error
        assert _same(shown["stop_reason"], task_run.stop_reason)
        assert _same(shown["output"], task_run.output)
        assert shown["model_calls"] == task_run.iterations
        assert shown["tokens"] == task_run.usage.total_tokens
        assert shown["latency"] == task_run.latency
        assert shown["model"] == task_run.model
        assert shown["run_id"] == task_run.run_id and shown["trace_id"] == task_run.trace_id
        assert shown["seed"] == int(task_run.tags["seed"])
        assert shown["prompt_tokens"] == sum(r.billed.prompt_tokens for r in runs)
        assert shown["completion_tokens"] == sum(r.billed.completion_tokens for r in runs)
        assert shown["cached_calls"] == sum(r.cached_calls for r in runs)
        assert _same(shown["cost"], spent(runs))
    for variant in ev.variants:
        mine = [r for row in ev.records if row.variant == variant for r in row.runs]
        assert summary.loc[variant, "prompt_tokens"] == sum(r.billed.prompt_tokens for r in mine)
        assert _same(summary.loc[variant, "spend"], spent(mine))
    assert _snapshot(ev) == before  # reading the tables wrote nothing
    # what the sweep made: errors, failed checks, several turns, cache hits, unmetered calls
    assert set(frame["outcome"]) == {"pass", "fail", "error"}
    assert frame.loc[("a", "turns", 0), "prompt_tokens"] == 0  # both turns answered cached
    assert frame.loc[("b", "turns", 0), "prompt_tokens"] == 60  # both turns billed
    assert math.isnan(frame.loc[("a", "quiet", 1), "cost"])  # priced, but its usage unknown
    assert frame.loc[("b", "slow", 1), "error"] == "timed out after 0.5 s"


async def test_a_row_reads_its_messages_once_per_version_of_its_session(monkeypatch):
    import agentnb.evals.record as record

    agent = an.Agent("be brief", [weather], model=FunctionModel(_reply, name="views-model"))
    ev = await an.evaluate({"a": agent}, an.TaskSet([TASKS["tool"]]), progress=False)
    read = []
    monkeypatch.setattr(record, "batches", lambda m: read.append(1) or batches(m))
    assert ev.runs.loc[0, "steps"] == 1 and len(read) == 1
    assert ev.summary.loc["a", "mean_steps"] == 1 and ev.runs.loc[0, "tool_calls"] == 1
    assert len(read) == 1  # read again: no message read
    session = ev.session("a", "tool")
    session.truncate(1)  # an edit: the row reads the messages again
    assert ev.runs.loc[0, "steps"] == 0 and len(read) == 2


async def test_tagged_sessions_make_the_same_rows_again(priced):
    ev = await _evaluation()
    sessions = [ev.session(*r.key) for r in ev.records]
    again = an.Evaluation.from_sessions(sessions, tasks=ev.tasks)
    assert again.runs.equals(ev.runs)
    assert [r.run for r in an.evals.records_of(sessions)] == [
        r.run for r in ev.records if r.run.start is not None
    ]


async def test_a_saved_evaluation_is_an_export_of_its_runs(tmp_path, priced):
    ev = await _evaluation()
    back = an.Evaluation.load(ev.save(tmp_path / "ev.jsonl"))
    assert back.runs.equals(ev.runs) and back.summary.equals(ev.summary)
    for row in back.records:
        original = ev.record(*row.key)
        assert [r.to_dict() for r in row.runs] == [r.to_dict() for r in original.runs]
        assert row.checks == original.checks
    header = json.loads((tmp_path / "ev.jsonl").read_text(encoding="utf-8").split("\n")[0])
    assert header["format"] == "agentnb.evaluation/3"


def test_an_evaluation_of_the_previous_format_loads_figure_for_figure(priced):
    """evaluation_v2.jsonl was written by the previous format (one copied record per row) and
    evaluation_v2.runs.json is the runs table it showed then (tests/evals/data/README.md)."""
    an.evals.prices["fixture-model"] = (1.0, 2.0)
    try:
        ev = an.Evaluation.load(DATA / "evaluation_v2.jsonl")
        then = json.loads((DATA / "evaluation_v2.runs.json").read_text(encoding="utf-8"))
        now = json.loads(ev.runs.to_json(orient="records", force_ascii=False))
        assert [{k: row[k] for k in old} for row, old in zip(now, then, strict=True)] == then
    finally:
        del an.evals.prices["fixture-model"]
    assert all(r.run.annotations["converted"] == "agentnb.evaluation/2" for r in ev.records)


def test_an_optimisation_of_the_previous_format_loads(tmp_path):
    opt = an.evals.Optimisation.load(DATA / "optimisation_v1.jsonl")
    then = json.loads((DATA / "optimisation_v1.expected.json").read_text(encoding="utf-8"))
    # what the summary said then, with the one thing it says since: the held candidate's export
    said = then["summary"].replace("(validation 50%)", "(validation 50%, opt.best_unproven)")
    assert opt.summary() == said and opt.best_id == then["best"]
    assert opt.proposer_calls == then["proposer_calls"]
    assert list(opt.proposer_tokens) == then["proposer_tokens"]
    assert len(opt.evaluation.records) == then["runs"]
    again = an.evals.Optimisation.load(opt.save(tmp_path / "opt.jsonl"))
    assert again.summary() == opt.summary()


def test_a_file_of_an_unknown_format_is_refused_naming_those_it_reads(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"format": "agentnb.evaluation/0"}) + "\n", encoding="utf-8")
    with pytest.raises(an.ConfigurationError, match=r"reads agentnb.evaluation/3, .*/1, .*/2"):
        an.Evaluation.load(path)


def test_a_row_built_by_hand_refuses_figures_only_messages_hold():
    with pytest.raises(an.ConfigurationError, match="steps=2 are read from a run's messages"):
        an.evals.EvalRecord("v", "t", 0, "pass", steps=2)
    row = an.evals.EvalRecord("v", "t", 0, "fail", model="m", prompt_tokens=10, tokens=12)
    assert row.run.tags == {"variant": "v", "task": "t", "repeat": "0", "seed": "0"}
    assert row.prompt_tokens == 10 and row.tokens == 12 and row.outcome == "fail"


async def test_a_cache_marks_its_replies_whole_and_streamed():
    cache = an.evals.ResponseCache()
    model = FunctionModel(lambda request: "晴", name="m")
    cached = an.evals.CachedModel(model, cache)
    request = an.models.ModelRequest([{"role": "user", "content": "天气"}])
    assert not (await cached.complete(request)).cached  # the model answered
    assert (await cached.complete(request)).cached  # the cache did
    assembler = an.models.ReplyAssembler()
    async for delta in cached.stream(request):
        assembler.add(delta)
    assert assembler.result().cached
    agent = an.Agent(model=cached)
    session = an.Session()
    await agent.run("天气", session=session)
    assert session.runs[-1].cached_calls == 1 and session.runs[-1].billed.total_tokens == 0


async def test_the_proposer_is_metered_by_the_records_of_its_runs():
    from agentnb.travel import TravelModel

    weak = an.travel.travel_agent(model=TravelModel("fabricate"), instructions="你是差旅助手。")
    opt = await an.optimize(
        weak,
        an.TaskSet(list(an.travel.task_set())[:12]),
        proposer=TravelModel().proposer(),
        budget=40,
        progress=False,
    )
    runs = opt.proposer_runs
    assert runs and all(r.tags == {"optimiser": "proposer"} for r in runs)
    assert opt.proposer_calls == sum(r.iterations for r in runs) == len(runs)
    usage = opt.proposer_usage
    assert usage.total_tokens == sum(r.usage.total_tokens for r in runs) > 0
    assert opt.proposer_tokens == (usage.prompt_tokens, usage.completion_tokens)
    assert opt.proposer_spend == spent(runs) == 0.0


# -- one writer: no figure of a run is written outside the runtime and the one annotation site
FIGURES = {
    "input", "start", "end", "output", "stop_reason", "detail", "stage", "iterations",
    "usage", "tags", "model", "cached_calls", "cached", "unmetered", "latency", "annotations",
    "outcome", "checks", "error", "steps", "model_calls", "tool_calls", "tool_errors", "tokens",
    "prompt_tokens", "completion_tokens", "divergence", "seed", "variant", "task", "repeat",
}  # fmt: skip
#: Who may write them, and why.
WRITERS = {
    "runtime/": "the runtime: each stage writes what it did, as it did it",
    "observe/recorder.py": "a proxied call's life as a run (the proxy is its runtime)",
    "service/attempt.py": "a service attempt whose worker stopped after its answer was committed, "
    "or died: its end recorded by the service (reshaped by issue 35's service work)",
    "evals/checked.py": "the one annotation site: what the checks found (annotate)",
    "evals/faithful.py": "the one replay annotation site: how a replaying run went against "
    "its recording (annotate_replay)",
    "evals/labels.py": "the one label site: a person's verdict on a run (label), an annotation "
    "beside the checks'",
    "evals/rescore.py": "a rescore's copies of the runs' records (each with its own annotations, "
    "so the source keeps its outcomes), and the record of the judge's calls, metered as they "
    "answer (the rescore is the judge's runtime)",
    "evals/turns.py": "the one site of a conversation's annotations: the user turn a run's "
    "input was, and how the conversation ended at its last run (note)",
}
#: Who may build a record with figures (``RunRecord(..., usage=...)``), and why.
MAKERS = {
    "runtime/state.py": "the runtime's own record of a run",
    "evals/apps.py": "an app's run, rebuilt from the calls the proxy saw (the app is its "
    "own runtime)",
    "service/rows.py": "the service's table of attempts, read back (its own codec; "
    "RunRecord.from_dict is the records' own)",
}


def _writes(root: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
            for t in flat:
                owner = ast.unparse(t.value).lower() if isinstance(t, ast.Attribute) else ""
                mine = "record" in owner or owner in ("run", "row", "r")
                if mine and t.attr in FIGURES and not any(name.startswith(w) for w in WRITERS):
                    found.append(f"{name}:{node.lineno}: {ast.unparse(t)} = ...")
            made = isinstance(node, ast.Call) and ast.unparse(node.func).endswith("RunRecord")
            given = {k.arg for k in node.keywords} if isinstance(node, ast.Call) else set()
            if made and given & FIGURES - {"tags", "start", "input"} and name not in MAKERS:
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_no_figure_of_a_run_has_a_second_writer():
    assert _writes() == []


def test_the_writer_check_sees_a_copied_figure(tmp_path):
    """The check fails on the kind of line it exists to catch (the runner's old copies)."""
    fake = tmp_path / "agentnb"
    (fake / "evals").mkdir(parents=True)
    (fake / "evals" / "runner.py").write_text(
        "def f(record, meter, result):\n"
        "    record.prompt_tokens = meter.prompt_tokens\n"
        "    record.latency = 1.0\n"
        "    return RunRecord('r', 't', None, usage=result.usage)\n",
        encoding="utf-8",
    )
    assert [f.split(": ", 1)[1][:24] for f in _writes(fake)] == [
        "record.prompt_tokens = .",
        "record.latency = ...",
        "RunRecord('r', 't', None",
    ]
