"""Saved evaluations: checks survive a restart, shared content is stored once, any text reads
back (the one character rule)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import agentnb as an
from agentnb import checks

NOTEBOOK = textwrap.dedent(
    """
    import asyncio, re, sys
    import agentnb as an
    from agentnb import checks

    LIMIT = 3

    def in_english(result):                      # a plain function of the notebook
        return bool(re.fullmatch(r"[ -~]*", result.output or "")) or "not English"

    def longer_than(n):                          # a closure over a number
        def longer(result):
            return len(result.output or "") > n + LIMIT - LIMIT
        return longer

    tasks = an.TaskSet([
        an.Task("en", "hello", checks=[in_english, longer_than(2), checks.no_tool_errors()]),
        an.Task("zh", "你好", checks=[in_english, longer_than(40)]),
    ])

    def reply(request):
        return "hello there" if request.messages[-1]["content"] == "hello" else "你好呀"

    agent = an.Agent(model=an.models.FunctionModel(reply))
    ev = asyncio.run(an.evaluate({"a": agent}, tasks, progress=False))
    ev.save(sys.argv[1])
    print(json.dumps([r.outcome for r in ev.records]))
    """
).replace("import asyncio, re, sys", "import asyncio, json, re, sys")

RELOAD = textwrap.dedent(
    """
    import asyncio, json, sys
    import agentnb as an

    ev = an.Evaluation.load(sys.argv[1], trust=True)
    agent = an.Agent(model=an.models.FunctionModel(
        lambda r: "hello there" if r.messages[-1]["content"] == "hello" else "你好呀"))
    again = asyncio.run(an.evaluate({"a": agent}, ev.tasks, progress=False))
    print(json.dumps([[r.outcome, [c.passed for c in r.checks]] for r in again.records]))
    untrusted = an.Evaluation.load(sys.argv[1])
    names = [c.name for c in untrusted.tasks["en"].checks]
    stub = asyncio.run(an.evaluate({"a": agent}, untrusted.tasks, progress=False))
    print(json.dumps([names, stub.records[0].outcome, stub.records[0].error[:200]]))
    """
)


def test_notebook_checks_survive_save_a_new_process_and_load(tmp_path):
    saved = tmp_path / "ev.jsonl"
    script = tmp_path / "notebook.py"
    script.write_text(NOTEBOOK, encoding="utf-8")
    first = subprocess.run(
        [sys.executable, str(script), str(saved)], capture_output=True, text=True, check=True
    )
    assert json.loads(first.stdout) == ["pass", "fail"]
    header = json.loads(saved.read_text(encoding="utf-8").split("\n")[0])
    kept = header["tasks"][0]["checks"]
    assert kept[0]["name"] == "in_english" and "def in_english" in kept[0]["source"]
    assert kept[0]["globals"]["re"] == {"module": "re"}
    assert kept[1]["closure"] == {"n": 2} and kept[2] == {"check": "no_tool_errors"}
    reload = tmp_path / "reload.py"
    reload.write_text(RELOAD, encoding="utf-8")
    second = subprocess.run(
        [sys.executable, str(reload), str(saved)], capture_output=True, text=True, check=True
    )
    trusted, untrusted = (json.loads(line) for line in second.stdout.splitlines())
    assert trusted == [["pass", [True, True, True]], ["fail", [False, False]]]
    names, outcome, error = untrusted
    assert names == ["in_english", "longer", "no_tool_errors()"]
    assert outcome == "error" and "trust=True" in error and "attach" in error


async def test_placeholders_are_re_attached_by_name(tmp_path):
    def shouty(result):
        return result.output.isupper() or "not shouting"

    tasks = an.TaskSet([an.Task("t", "q", checks=[shouty])])
    agent = an.Agent(model=an.models.FunctionModel(lambda r: "HEY"))
    ev = await an.evaluate({"a": agent}, tasks)
    back = an.Evaluation.load(ev.save(tmp_path / "ev.jsonl"))
    assert back.records[0].checks == ev.records[0].checks  # the recorded outcomes are kept
    attached = back.tasks.attach({"shouty": shouty})
    assert (await an.evaluate({"a": agent}, attached)).records[0].outcome == "pass"
    with pytest.raises(an.ConfigurationError, match="no task has a check named"):
        back.tasks.attach({"nope": shouty})


async def test_a_check_that_cannot_be_kept_refuses_the_save_naming_it(tmp_path):
    tasks = an.TaskSet([an.Task("t", "q", checks=[lambda r: True, checks.no_tool_errors()])])
    ev = await an.evaluate({"a": an.Agent(model=an.models.FunctionModel(lambda r: "x"))}, tasks)
    with pytest.raises(an.ConfigurationError, match="'<lambda>' cannot be saved"):
        ev.save(tmp_path / "ev.jsonl")
    assert not (tmp_path / "ev.jsonl").exists()  # never a file with the checks dropped


async def test_answers_with_line_separators_and_lone_surrogates_save_and_load(tmp_path):
    """H4: U+2028 / U+0085 made Evaluation.load fail; a lone surrogate made save fail."""
    odd = "line\u2028break\u0085next\u2029para \udcff end"

    def reply(request):
        return odd

    ev = await an.evaluate(
        {"a": an.Agent(model=an.models.FunctionModel(reply))},
        [an.Task("t\u2028x", "q\u0085", checks=[checks.answer_contains("line")])],
    )
    path = ev.save(tmp_path / "ev.jsonl")
    text = path.read_text(encoding="utf-8")
    assert len(text.split("\n")) == 3 and "\u2028" not in text
    back = an.Evaluation.load(path)
    assert (
        back.records[0].output == odd and back.session("a", "t\u2028x").messages[-1].content == odd
    )


async def test_two_hundred_runs_fit_in_a_megabyte_and_a_half(tmp_path):
    tasks = an.travel.task_set()
    base = an.travel.travel_agent()
    variants = {"a": base, "b": base.copy(instructions=base.instructions + "\n回答要简洁。")}
    repeats = -(-200 // (2 * len(tasks)))
    ev = await an.evaluate(variants, tasks, repeats=repeats)
    assert len(ev.records) >= 200
    path = ev.save(tmp_path / "ev.jsonl")
    size = path.stat().st_size * 200 / len(ev.records)
    assert size <= 1.5e6, f"{size / 1e6:.2f} MB per 200 runs"
    back = an.Evaluation.load(path)
    for r in ev.records[:: len(ev.records) // 7]:
        assert back.session(*r.key).to_openai() == ev.session(*r.key).to_openai()
        assert len(back.trace(*r.key)) == len(ev.trace(*r.key))
    assert back.summary.equals(ev.summary)


def booked(room):
    """The usual check factory: each check named after what it checks."""

    def check(result):
        return room in (result.output or "") or f"{room} not booked"

    check.__name__ = f"booked_{room}"
    return check


async def test_a_check_named_by_hand_loads_under_the_name_its_def_binds(tmp_path):
    """check.__name__ = f"booked_{room}" saved, then load(trust=True) died with NameError
    and the whole file refused to load (issue 36): the source binds 'check'."""
    tasks = an.TaskSet([an.Task("t", "q", checks=[booked("A"), booked("B")])])
    agent = an.Agent(model=an.models.FunctionModel(lambda r: "room A"))
    ev = await an.evaluate({"a": agent}, tasks)
    back = an.Evaluation.load(ev.save(tmp_path / "ev.jsonl"), trust=True)
    assert [c.name for c in back.tasks["t"].checks] == ["booked_A", "booked_B"]
    again = await an.evaluate({"a": agent}, back.tasks)
    assert again.records[0].checks == ev.records[0].checks
    assert [c.passed for c in again.records[0].checks] == [True, False]


async def test_a_check_that_cannot_be_loaded_fails_itself_not_the_file(tmp_path):
    def uses_a_module(result):
        return bool(json.dumps(result.output))

    tasks = an.TaskSet([an.Task("t", "q", checks=[uses_a_module, checks.no_call()])])
    path = tasks.to_jsonl(tmp_path / "t.jsonl")
    record = json.loads(path.read_text(encoding="utf-8"))
    record["checks"][0]["globals"]["json"] = {"module": "no_such_module_anywhere"}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    back = an.TaskSet.from_jsonl(path, trust=True)  # the file loads
    assert [c.name for c in back["t"].checks] == ["uses_a_module", "no_call()"]
    ev = await an.evaluate({"a": an.Agent(model=an.models.FunctionModel(lambda r: "x"))}, back)
    first, other = ev.records[0].checks
    assert not first.passed and "could not be loaded" in first.reason
    assert "no_such_module_anywhere" in first.reason and other.passed
    assert back.to_dicts() == [record]  # saved again as it came
