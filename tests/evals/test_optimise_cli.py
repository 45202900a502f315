"""python -m agentnb optimize: the run, its files, its exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from agentnb.evals.optimise import Optimisation
from agentnb.travel.data import data_dir
from tests.evals.test_ci import ROOT


def optimize(*args: str, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "agentnb", "optimize", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_the_command_improves_the_weak_agent_and_writes_its_files(tmp_path):
    best, report, saved = tmp_path / "best.json", tmp_path / "opt.json", tmp_path / "opt.jsonl"
    done = optimize(
        str(data_dir() / "tasks.jsonl"),
        "--agent",
        "tests.evals.optimise_agents:weak",
        "--proposer",
        "travel",
        "--budget",
        "120",
        "--best",
        str(best),
        "--json",
        str(report),
        "--save",
        str(saved),
        "--require-improvement",
    )
    assert done.returncode == 0, done.stderr
    assert "validation success: 10% (c0, the agent as given) → 80% (c2" in done.stdout
    assert "optimize [" in done.stderr and "/120 metric calls" in done.stderr  # the progress bar
    texts = json.loads(best.read_text(encoding="utf-8"))
    assert "你必须使用工具" in texts["instructions"] and "search_flights" in texts["tools"]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["best"] == "c2" and data["metric_calls"] <= 120
    assert Optimisation.load(saved).best_id == "c2"


def test_no_promotion_exits_1_with_require_improvement_and_usage_errors_exit_2(tmp_path):
    tasks = str(data_dir() / "tasks.jsonl")
    done = optimize(
        tasks, "--agent", "tests.evals.optimise_agents:article", "--proposer", "travel",
        "--budget", "60", "--require-improvement", "--quiet",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "every training task passes" in done.stdout
    assert "allows 0 proposals to reach the gate" in done.stderr  # the floor warning
    bad = optimize(tasks, "--agent", "nowhere:agent", "--proposer", "travel")
    assert bad.returncode == 2 and "cannot be loaded" in bad.stderr
    low = optimize(tasks, "--agent", "tests.evals.optimise_agents:weak", "--proposer", "travel",
                   "--budget", "10")  # fmt: skip
    assert low.returncode == 2 and "cannot pay for the start" in low.stderr
    # an output that cannot be written is refused before the budget is spent (it crashed
    # after the run, losing --save and --json: the hostile test's M2)
    nowhere, saved = str(tmp_path / "no" / "best.json"), str(tmp_path / "s")
    weak = ["--agent", "tests.evals.optimise_agents:weak", "--proposer", "travel"]
    lost = optimize(tasks, *weak, "--best", nowhere, "--save", saved)
    assert (
        lost.returncode == 2
        and "cannot write" in lost.stderr
        and "its folder" in lost.stderr
        and "does not exist" in lost.stderr
    )
    assert "metric calls" not in lost.stdout and not (tmp_path / "s").exists()


def test_a_failed_optimiser_writes_save_first_and_exits_3(tmp_path, monkeypatch):
    """A failure of the loop ended the command before --save: the runs were lost (H1)."""
    from agentnb.__main__ import main
    from agentnb.evals.optimise import loop

    async def broken(*args, **kwargs):
        raise RuntimeError("a bug in the loop")

    monkeypatch.setattr(loop, "_decide", broken)
    monkeypatch.syspath_prepend(str(ROOT))
    saved = tmp_path / "opt.jsonl"
    code = main([
        "optimize", str(data_dir() / "tasks.jsonl"), "--agent",
        "tests.evals.optimise_agents:weak", "--proposer", "travel", "--quiet",
        "--save", str(saved),
    ])  # fmt: skip
    assert code == 3
    back = Optimisation.load(saved)
    assert back.stop_reason == "failed: RuntimeError: a bug in the loop" and back.metric_calls > 0


def test_best_unproven_writes_the_strongest_held_candidate_labelled_as_unproven(tmp_path):
    """Issue 36: --best wrote c0's texts although c1 won every held-out task it flipped, and
    nothing exported the candidate the gate held."""
    best, held = tmp_path / "best.json", tmp_path / "unproven.json"
    toy = ["tests.evals.optimise_agents:toy_tasks", "--agent", "tests.evals.optimise_agents:toy"]
    done = optimize(
        *toy, "--proposer", "tests.evals.optimise_agents:careful", "--budget", "40",
        "--best", str(best), "--best-unproven", str(held), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "warning: the agent as given already passes 4 of 7 validation tasks" in done.stderr
    assert "Be careful." not in json.loads(best.read_text(encoding="utf-8"))["instructions"]
    unproven = json.loads(held.read_text(encoding="utf-8"))
    assert unproven["unproven"] is True and unproven["label"].startswith("UNPROVEN: candidate c1")
    assert unproven["candidate"] == "c1" and unproven["status"] == "held"
    assert unproven["instructions"].endswith("Be careful.") and unproven["tools"] == {}
    assert (unproven["validation"], unproven["incumbent"]) == (1.0, "c0")
    assert unproven["incumbent_validation"] == 4 / 7 and "p = 0.25" in unproven["gate"]
    assert "UNPROVEN: candidate c1" in done.stdout and str(held) in done.stdout
    # no held candidate did better: nothing written, and it says why
    none = tmp_path / "none.json"
    done = optimize(
        *toy, "--proposer", "tests.evals.optimise_agents:brief", "--budget", "40",
        "--best-unproven", str(none), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0 and not none.exists()
    assert "no held candidate did better than c0 on the held-out tasks" in done.stderr
