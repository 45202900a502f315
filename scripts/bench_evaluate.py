"""A warm evaluation per run, against the bare loop and ``agent.run``, paired in the same rounds.

    python scripts/bench_evaluate.py [--rounds N]      # make bench runs it too

The work of a run is the core rows' (``scripts/bench.py``: 5 model calls, 4 instant async
tools); the evaluation sweeps it over 20 tasks x 2 repeats with two checks a task (the answer
holds the flight, the run stopped with its final answer), after one sweep that warms it up
(imports, the statistics). Each round samples the three once, in a rotating order: CPU per
run of the sweep, of the same run as ``agent.run`` on a fresh session, and of the bare loop.
What the evaluation adds per run is its own bookkeeping (the run's tags, its checks as an
annotation, its row): the ratio to the bare loop is comparable across commits, since the bare
loop is the same code: ``TURN_4`` below is the target, this row measured at the turn-4
commit. That commit had no experiment log, so the row's evaluation keeps none (``log=False``);
a fourth sampler keeps the default log (in a temporary folder, never the working directory)
and its row says what recording every evaluation costs per run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import bench

import agentnb as an

TASKS, REPEATS = 20, 2
#: The row at the turn-4 commit (2459d3b), this script on this machine: the medians of three
#: runs of 12 rounds, 24.5x, 24.8x and 24.0x (18c3fc4, before the runs were the record: 26.2x,
#: 24.6x, 26.0x). ``PYTHONPATH=<a checkout> python scripts/bench_evaluate.py`` measures one.
TURN_4 = 24.4


def task_set(n: int = TASKS) -> an.TaskSet:
    checks = [an.checks.answer_contains("MU5101"), an.checks.stops_with("final_answer")]
    return an.TaskSet([an.Task(f"t{i:02}", bench.TASK, checks=list(checks)) for i in range(n)])


def samplers(runs: int) -> dict[str, Any]:
    """The three samplers of a round: CPU seconds per run."""
    agent, tasks = bench.make_agent(), task_set()
    bare_model = bench.BareModel(bench.reply_texts())
    per_sweep = len(tasks) * REPEATS
    place = Path(tempfile.mkdtemp(prefix="agentnb-bench-")) / "experiments.sqlite"

    async def sweep(log: Any = False) -> None:
        ev = await an.evaluate({"a": agent}, tasks, REPEATS, progress=False, log=log)
        assert all(r.outcome == "pass" for r in ev.records), ev.runs

    async def logged() -> None:
        await sweep(place)

    async def plain() -> None:
        result = await agent.run(bench.TASK, session=an.Session())
        assert result.stop_reason == "final_answer"

    async def bare() -> None:
        await bench.bare_run(bare_model, bench.TASK, [])

    asyncio.run(sweep())  # warm: the statistics, the checks' first calls
    asyncio.run(logged())  # and the log's store, its tables made
    return {
        "evaluation": lambda: bench.cpu(sweep, max(runs // per_sweep, 1), per_sweep),
        "logged": lambda: bench.cpu(logged, max(runs // per_sweep, 1), per_sweep),
        "agent.run": lambda: bench.cpu(plain, runs, 1),
        "bare": lambda: bench.cpu(bare, runs * 10, 1),  # a bare run is short: more of them
    }


def warm_evaluation(rounds: int, runs: int = 80) -> dict[str, list[float]]:
    """The row: a warm evaluation per run against the bare loop and against ``agent.run``."""
    s = bench.paired(samplers(runs), rounds)
    print(
        f"\nA warm an.evaluate per run ({TASKS} tasks x {REPEATS} repeats, 2 checks a task), "
        f"{rounds} paired rounds: CPU per run [interquartile range]"
    )
    target = f"target <= {TURN_4}x (turn 4's)"
    bench.row("the evaluation / the bare loop", s["evaluation"], s["bare"], target)
    bench.row("  agent.run / the bare loop", s["agent.run"], s["bare"], "the run alone")
    bench.row("  the evaluation / agent.run", s["evaluation"], s["agent.run"], "its bookkeeping")
    bench.row("  the evaluation logged / not", s["logged"], s["evaluation"], "the experiment log")
    return s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--runs", type=int, default=80)
    args = parser.parse_args()
    print(f"agentnb {an.__version__} from {Path(an.__file__).parent}; {bench.load()}")
    warm_evaluation(args.rounds, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
