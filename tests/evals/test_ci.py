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


def in_process(*argv: str) -> int:
    """``python -m agentnb ...`` in this process (so a test can break a step of it)."""
    from agentnb.__main__ import main

    return main(list(argv))


def test_every_output_path_is_checked_before_the_first_run(tmp_path):
    """--junit naming a folder crashed after the sweep with exit 1, the regression code,
    and --save was never written: the sweep was lost (H8). Each path is checked first."""
    tasks = str(data_dir() / "tasks.jsonl")
    variants = ["--variants", "tests.evals.ci_variants:unchanged"]
    cases = {
        "--junit": (str(tmp_path), "it is a folder"),
        "--json": (str(tmp_path / "no" / "r.json"), f"its folder {str(tmp_path / 'no')!r}"),
        "--save": (str(tmp_path / "x" / "e.jsonl"), f"its folder {str(tmp_path / 'x')!r}"),
    }
    for option, (path, why) in cases.items():
        kept = [] if option == "--save" else ["--save", str(tmp_path / "kept.jsonl")]
        done = cli(tasks, *variants, option, path, *kept)
        assert done.returncode == 2, (option, done.stderr[-1000:])
        assert f"cannot write {path!r}: {why}" in done.stderr and "evaluate:" not in done.stderr
        assert "Traceback" not in done.stderr


def test_a_crash_after_the_sweep_keeps_save_and_exits_3_not_1(tmp_path, monkeypatch):
    from agentnb.evals import ci

    def broken(*args, **kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(ci, "write_json", broken)
    saved = tmp_path / "ev.jsonl"
    tasks = an.travel.task_set(tags=["article"]).to_jsonl(tmp_path / "tasks.jsonl")
    code = in_process(
        "eval", str(tasks), "--variants", "tests.evals.ci_variants:regressing", "--quiet",
        "--save", str(saved), "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert code == ci.EXIT["crash"] == 3  # a crash is never the regression status
    assert len(an.Evaluation.load(saved).records) == 2 * len(an.TaskSet.from_jsonl(tasks))


def test_a_variants_factory_that_raises_is_one_line_and_exit_2():
    """It printed a traceback and exited 1, the regression code (L2)."""
    done = cli(str(data_dir() / "tasks.jsonl"), "--variants", "tests.evals.ci_variants:broken")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "agentnb eval: variants 'tests.evals.ci_variants:broken' raised ValueError: "
        "OPENAI_API_KEY is not set"
    )


def test_junit_xml_is_well_formed_whatever_a_task_is_called(tmp_path):
    """A task name with a control character made --junit write XML that is not well-formed
    (L1): every name and text is cleaned."""
    odd = ["tab\there", "bell\x07", "nul\x00x", "esc\x1b[31m", "surrogate \udcff", "ok"]
    tasks = an.TaskSet([an.Task(name, "你好", checks=[an.checks.no_call()]) for name in odd])
    path = tasks.to_jsonl(tmp_path / "odd.jsonl")
    junit = tmp_path / "report.xml"
    code = in_process(
        "eval", str(path), "--variants", "tests.evals.ci_variants:unchanged", "--quiet",
        "--junit", str(junit),
    )  # fmt: skip
    assert code == 0
    cases = ET.parse(junit).getroot().findall("testsuite/testcase")  # parses: well-formed
    assert len(cases) == 2 * len(odd) + 1 and "ok[0]" in {c.get("name") for c in cases}  # + gate


def test_progress_in_a_log_is_whole_lines_and_help_names_the_exit_codes():
    """The progress line was carriage returns: one endless line in a CI log (issue 36)."""
    done = cli(str(data_dir() / "tasks.jsonl"), "--variants", "tests.evals.ci_variants:unchanged")
    assert done.returncode == 0, done.stderr[-1000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("evaluate:")]
    n = 2 * len(an.travel.task_set())
    assert lines and "\r" not in done.stderr and lines[-1].startswith(f"evaluate: {n}/{n} runs")
    helped = cli("--help")
    assert "exit status: 0 ok, 1 a regression" in " ".join(helped.stdout.split())
    assert "2 a usage or configuration error" in " ".join(helped.stdout.split())
    assert "3 a crash" in helped.stdout


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
