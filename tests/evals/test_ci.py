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


def test_identical_repeats_give_the_gate_the_verdict_one_run_gives(tmp_path):
    """Issue 36: a 2-of-13-task regression on a deterministic model exited 0 with --repeats 1
    (p = 0.5) and 1 with --repeats 3 (p = 0.031: each identical repeat counted as a pair)."""
    spec = [
        "tests.evals.ci_variants:thirteen",
        "--variants",
        "tests.evals.ci_variants:two_of_thirteen",
    ]
    once = cli(*spec, "--quiet")
    report = tmp_path / "report.json"
    thrice = cli(*spec, "--quiet", "--repeats", "3", "--json", str(report))
    for done in (once, thrice):
        assert done.returncode == 0, done.stdout + done.stderr
        assert "gate: no regression against base" in done.stdout
        assert (
            "no evidence of a difference (worse better on 0 of 13 tasks, worse on 2; p = 0.5"
            in (done.stdout)
        )
    assert "every task's 3 repeats were identical (a deterministic model)" in thrice.stdout
    row = json.loads(report.read_text(encoding="utf-8"))["comparisons"][0]
    assert (row["test"], row["p"], row["regressed"]) == ("tasks", 0.5, False)
    assert row["mcnemar_p"] == pytest.approx(0.03125) and row["repeats_identical"] is True
    # the per-pair McNemar test, asked for by name: it fails the build, and says what it assumed
    pairs = cli(*spec, "--quiet", "--repeats", "3", "--gate", "pairs")
    assert pairs.returncode == 1, pairs.stdout + pairs.stderr
    assert "assuming the 3 repeats of a task independent" in pairs.stdout
    assert "counted each task 3 times: over tasks, p = 0.5" in pairs.stdout


async def test_assert_no_regression_counts_tasks_not_identical_repeats():
    from tests.evals.ci_variants import thirteen, two_of_thirteen

    ev = await an.evaluate(two_of_thirteen(), thirteen(), repeats=3, progress=False)
    assert an.testing.assert_no_regression(ev, "base", "worse").p == pytest.approx(0.5)
    with pytest.raises(AssertionError, match=r"p = 0.0312 < 0.05, exact McNemar over 39 pairs"):
        an.testing.assert_no_regression(ev, "base", "worse", gate="pairs")
