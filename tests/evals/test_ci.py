"""The CI runner: python -m agentnb eval, its gate, JUnit XML and JSON; assert_no_regression."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import agentnb as an
from agentnb.travel.data import data_dir

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "agentnb", "eval", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_the_gate_fails_the_build_on_the_known_regression(tmp_path):
    tasks = data_dir() / "tasks.jsonl"
    junit, report = tmp_path / "report.xml", tmp_path / "report.json"
    done = cli(
        str(tasks),
        "--variants",
        "tests.evals.ci_variants:regressing",
        "--baseline",
        "article",
        "--junit",
        str(junit),
        "--json",
        str(report),
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "REGRESSION" in done.stdout and "gate: no_tools_rule regressed" in done.stdout
    assert "success_rate" in done.stdout and "evaluate: " in done.stderr  # summary, progress
    root = ET.parse(junit).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"article", "no_tools_rule", "gate"}
    n = len(an.travel.task_set())
    assert suites["article"].get("tests") == str(n) and suites["article"].get("failures") == "0"
    assert int(suites["no_tools_rule"].get("failures")) >= 30
    failure = suites["no_tools_rule"].find("testcase/failure")
    assert failure is not None and "the answer lacks" in failure.text
    assert suites["gate"].get("failures") == "1"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert len(data["records"]) == 2 * n and data["comparisons"][0]["regressed"] is True


def test_an_unchanged_variant_passes_the_gate():
    done = cli(
        str(data_dir() / "tasks.jsonl"),
        "--variants",
        "tests.evals.ci_variants:unchanged",
        "--quiet",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "gate: no regression against article" in done.stdout


def test_usage_errors_exit_2():
    done = cli("nowhere.jsonl", "--variants", "tests.evals.ci_variants:unchanged")
    assert done.returncode == 2 and "nowhere.jsonl" in done.stderr
    done = cli(str(data_dir() / "tasks.jsonl"), "--variants", "tests.evals.nope:x")
    assert done.returncode == 2 and "cannot be loaded" in done.stderr


async def test_assert_no_regression_is_the_same_gate_in_a_test():
    from tests.evals.ci_variants import regressing, unchanged

    tasks = an.travel.task_set(tags=["article"])
    tasks = an.TaskSet([*tasks, *an.travel.task_set(tags=["budget"])])
    ev = await an.evaluate(regressing(), tasks)
    with pytest.raises(AssertionError, match="no_tools_rule regressed against article"):
        an.testing.assert_no_regression(ev, "article", "no_tools_rule")
    same = await an.evaluate(unchanged(), tasks)
    assert an.testing.assert_no_regression(same, "article", "same").losses == 0
