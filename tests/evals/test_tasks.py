"""Tasks and task sets: construction, lookup, JSONL and DataFrame round trips."""

from __future__ import annotations

import json
import sys

import pytest

import agentnb as an
from agentnb import checks
from agentnb.errors import ConfigurationError


def budget_named(result) -> bool | str:
    """A module-level check function: it can be written to JSONL by its import path."""
    return "预算" in (result.output or "") or "no budget in the answer"


def fresh_desk(agent):
    return {"agent": agent.name}


def every_check() -> list:
    return [
        checks.calls("search_weather", city=["北京", "Beijing"], date="周日"),
        checks.sequence(
            ["search_flights", ["search_weather", checks.calls("search_hotels", city="北京")]],
            order="exact",
        ),
        checks.same_batch("search_weather", checks.calls("search_hotels")),
        checks.no_call("book_flight"),
        checks.stops_with("final_answer", "max_iterations"),
        checks.answer_contains("880", "MU5101", mode="any"),
        checks.answer_matches(r"\d+ 元"),
        checks.max_steps(4),
        checks.no_tool_errors(),
        checks.grounded(min_digits=3),
        checks.end_state(budget_named),
        budget_named,
    ]


def task_set() -> an.TaskSet:
    return an.TaskSet(
        [
            an.Task(
                "trip",
                "我周五从上海去北京出差",
                checks=every_check(),
                tags=["zh", "article"],
                metadata={"source": "000"},
                setup=fresh_desk,
            ),
            an.Task(
                "follow",
                "那天北京天气呢",
                checks=[checks.calls("search_weather")],
                history=["周五从上海飞北京", {"role": "system", "content": "今天是 2025-01-06"}],
            ),
            an.Task(
                "judge", "Weather in Beijing?", checks=[checks.judge(None, "Says the weather")]
            ),
        ],
        name="mine",
    )


def test_a_task_set_is_iterable_sized_and_indexed_by_name():
    tasks = task_set()
    assert len(tasks) == 3 and [t.name for t in tasks] == ["trip", "follow", "judge"]
    assert tasks["follow"].history[0] == "周五从上海飞北京" and tasks[0].name == "trip"
    assert "trip" in tasks and "nope" not in tasks
    with pytest.raises(KeyError, match="nope"):
        tasks["nope"]
    assert tasks.select(tags=["article"]).names == ["trip"]
    assert tasks["trip"].checks[-1].name == "budget_named"


def test_task_names_are_unique():
    with pytest.raises(ValueError, match="unique"):
        an.TaskSet([an.Task("a", "x"), an.Task("a", "y")])


def test_a_task_set_round_trips_through_jsonl(tmp_path):
    tasks = task_set()
    path = tasks.to_jsonl(tmp_path / "tasks.jsonl")
    text = path.read_text(encoding="utf-8")
    assert "我周五从上海去北京出差" in text and '"check": "calls"' in text  # readable Chinese
    model = an.models.ScriptedModel(["PASS"])
    back = an.TaskSet.from_jsonl(path, judge=model)
    assert back.to_dicts() == tasks.to_dicts()
    assert back["trip"].checks == tasks["trip"].checks  # declarative checks compare equal
    assert back["trip"].setup is fresh_desk and back["judge"].checks[0].model is model
    assert [c.name for c in back["trip"].checks] == [c.name for c in tasks["trip"].checks]


def test_a_task_set_round_trips_through_a_dataframe():
    tasks = task_set()
    frame = tasks.to_frame()
    assert list(frame["name"]) == ["trip", "follow", "judge"]
    assert TaskSetEqual(an.TaskSet.from_frame(frame), tasks)
    # list cells written as JSON text (a CSV, a spreadsheet) are read too
    import json

    as_text = frame.assign(
        checks=frame["checks"].map(lambda c: json.dumps(c, ensure_ascii=False)),
        tags=frame["tags"].map(json.dumps),
    )
    assert TaskSetEqual(an.TaskSet.from_frame(as_text), tasks)


def TaskSetEqual(a: an.TaskSet, b: an.TaskSet) -> bool:
    return a.to_dicts() == b.to_dicts()


def test_a_lambda_check_cannot_be_written_and_says_why(tmp_path):
    tasks = an.TaskSet([an.Task("a", "x", checks=[lambda r: True, checks.no_tool_errors()])])
    with pytest.raises(ConfigurationError, match="'<lambda>' cannot be saved: it is a lambda"):
        tasks.to_jsonl(tmp_path / "t.jsonl")
    assert not (tmp_path / "t.jsonl").exists()  # refused whole: nothing half-written
    frame = tasks.to_frame()  # any check shows, by name
    assert frame["checks"][0] == [
        {"check": "function", "name": "<lambda>"},
        {"check": "no_tool_errors"},
    ]


def test_a_closure_over_an_object_is_refused_naming_it(tmp_path):
    lock = object()

    def guarded(result):
        return lock is not None

    tasks = an.TaskSet([an.Task("a", "x", checks=[guarded])])
    with pytest.raises(ConfigurationError, match=r"'guarded'.*closes over lock = object"):
        tasks.to_jsonl(tmp_path / "t.jsonl")


def test_task_files_name_the_bad_line_and_refuse_dangerous_refs(tmp_path):
    path = tmp_path / "t.jsonl"
    good = '{"name": "a", "input": "x"}'
    path.write_text(good + "\n\n" + '{"name": "b"}' + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"t.jsonl:3: a task needs a name and an input"):
        an.TaskSet.from_jsonl(path)
    for ref in ("sys:exit", "os:system", "builtins:exec", "subprocess:run"):
        bad = {"name": "a", "input": "x", "checks": [{"check": "function", "ref": ref}]}
        path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
        with pytest.raises(ConfigurationError, match=r"t.jsonl:1: check .* is not loaded"):
            an.TaskSet.from_jsonl(path)  # sys:exit used to end the process
    bad = {"name": "a", "input": "x", "checks": [{"check": "function", "ref": "agentnb:Agent"}]}
    path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"names a .*, not a function"):
        an.TaskSet.from_jsonl(path)


def test_task_files_with_line_separators_read_back(tmp_path):
    """U+2028 / U+0085 in a task: str.splitlines() tore the line (H4, M5)."""
    tasks = an.TaskSet(
        [an.Task("a", "first\u2028second\u0085third", checks=[checks.answer_contains("x\u2029y")])]
    )
    path = tasks.to_jsonl(tmp_path / "t.jsonl")
    assert "\u2028" not in path.read_text(encoding="utf-8")  # escaped as \\u2028
    back = an.TaskSet.from_jsonl(path)
    assert back["a"].input == "first\u2028second\u0085third"
    assert back.to_dicts() == tasks.to_dicts()


def test_unknown_checks_and_broken_refs_are_readable_errors():
    with pytest.raises(ConfigurationError, match="unknown check 'nope'"):
        an.TaskSet.from_dicts([{"name": "a", "input": "x", "checks": [{"check": "nope"}]}])
    with pytest.raises(ConfigurationError, match="cannot be imported"):
        an.TaskSet.from_dicts(
            [{"name": "a", "input": "x", "checks": [{"check": "function", "ref": "nowhere:fn"}]}],
            trust=True,
        )
    with pytest.raises(ConfigurationError, match="not a check"):
        an.Task("a", "x", checks=[42])


SIDE_EFFECT = """
import pathlib
pathlib.Path(__file__).with_name("imported.txt").write_text("ran")

def booked(result):
    return True

def make_tools():
    return []
"""


async def test_reading_a_task_file_imports_nothing_it_names_unless_trusted(tmp_path, monkeypatch):
    """TaskSet.from_jsonl on {"check": "function", "ref": "PIL.__main__:x"} ran Pillow's
    __main__ (and Evaluation.load, Optimisation.load likewise): the refusal came after the
    import (H4). Any module not imported yet stays unimported, whatever it is."""
    (tmp_path / "sideeffect_checks.py").write_text(SIDE_EFFECT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "sideeffect_checks", raising=False)
    record = {
        "name": "a", "input": "x", "tools": "sideeffect_checks:make_tools",
        "checks": [{"check": "function", "ref": "sideeffect_checks:booked"},
                   {"check": "no_call"}],
    }  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    tasks = an.TaskSet.from_jsonl(path)
    assert "sideeffect_checks" not in sys.modules and not (tmp_path / "imported.txt").exists()
    assert [c.name for c in tasks["a"].checks] == ["booked", "no_call()"]
    agent = an.Agent(model=an.models.FunctionModel(lambda r: "x"))
    ev = await an.evaluate({"a": agent}, tasks)  # the hook refuses: the run is an error
    assert "its module 'sideeffect_checks' is not imported" in ev.records[0].error
    assert "trust=True" in ev.records[0].error
    saved = ev.save(tmp_path / "ev.jsonl")
    an.Evaluation.load(saved)
    assert "sideeffect_checks" not in sys.modules and not (tmp_path / "imported.txt").exists()
    trusted = an.TaskSet.from_jsonl(path, trust=True)  # asked: imported
    assert (tmp_path / "imported.txt").exists() and trusted["a"].checks[0].name == "booked"
    again = an.TaskSet.from_jsonl(path)  # a module already imported is read, not imported
    assert again["a"].checks[0].fn is sys.modules["sideeffect_checks"].booked


def test_a_module_getattr_never_runs_when_a_file_is_read_without_trust(monkeypatch):
    """An imported module's __getattr__ is code too: a name is read statically."""
    import types

    module = types.ModuleType("lazy_checks")
    calls = []
    module.__getattr__ = lambda name: calls.append(name) or (lambda r: True)  # type: ignore
    monkeypatch.setitem(sys.modules, "lazy_checks", module)
    record = {"name": "a", "input": "x", "checks": [{"check": "function", "ref": "lazy_checks:f"}]}
    with pytest.raises(ConfigurationError, match="cannot be imported"):
        an.TaskSet.from_dicts([record])
    assert calls == []


def _tool_pair():
    @an.tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: ok"

    @an.tool
    def book(city: str) -> str:
        """Book a room in a city."""
        return f"booked {city}"

    return lookup, book


async def test_a_tools_factory_may_return_a_tuple_of_tools_or_is_refused_by_the_rule():
    """A factory returning a tuple of tools failed with TypeError: 'Tool' object is not
    iterable, read as (tools, state) (issue 36): a tuple of tools is tools, a pair whose
    first item is a collection is (tools, state), anything else names the rule."""
    calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "book", "arguments": '{"city": "北京"}'},
        }
    ]
    model = an.models.ScriptedModel([{"content": None, "tool_calls": calls}, "done"] * 3)
    agent = an.Agent(model=model)
    shapes = {
        "tuple": lambda: _tool_pair(),
        "pair": lambda: (list(_tool_pair()), {"booked": []}),
        "toolset": lambda: an.Toolset(_tool_pair()),
    }
    for shape, factory in shapes.items():
        tasks = an.TaskSet([an.Task("t", "订北京", checks=[checks.calls("book")], tools=factory)])
        ev = await an.evaluate({"a": agent}, tasks)
        assert ev.records[0].outcome == "pass", (shape, ev.records[0].error)
    model = an.models.ScriptedModel(["done"])
    bad = an.TaskSet([an.Task("t", "x", tools=lambda: ("not a tool", 42, None))])
    ev = await an.evaluate({"a": an.Agent(model=model)}, bad)
    assert "a tools factory returns the run's tools (a list, a tuple or a Toolset" in (
        ev.records[0].error
    )


def test_a_tools_factory_that_cannot_be_saved_is_called_a_tools_factory(tmp_path):
    """The save refused it as a 'check' (issue 36)."""
    tasks = an.TaskSet([an.Task("t", "x", tools=lambda: [])])
    with pytest.raises(ConfigurationError, match=r"^tools factory '<lambda>' cannot be saved"):
        tasks.to_jsonl(tmp_path / "t.jsonl")
