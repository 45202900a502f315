"""The optimiser's own overhead per metric call, against a plain ``an.evaluate`` of the same runs.

    python scripts/bench_optimise.py [--rounds N]      # make bench runs it too

One optimisation on the stand-in (the weak prompt of notebook 16, budget 117, seed 0) makes
its metric calls; the plain side evaluates exactly those runs again, candidate by candidate
(``an.evaluate({id: agent}, the tasks it ran)``, the same concurrency and seed). Both are CPU
time in one process, sampled in the same rounds (the order alternates). The optimiser's side
includes everything it adds: the split, the front, scoring, the reflection requests, reading
the replies, the gate's statistics (an exact McNemar test and a 9,999-resample bootstrap per
gate), the history, the events; the stand-in proposer's own time (reading the failures, its
rule table) is measured apart and shown beside it: it is the proposer model's time, as an
LLM's would be.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from typing import Any

import agentnb as an
from agentnb.travel import TravelModel

BUDGET = 117


def weak() -> an.Agent:
    return an.travel.travel_agent(model=TravelModel("fabricate"), instructions="你是差旅助手。")


class Timed:
    """The stand-in proposer with its CPU time counted."""

    def __init__(self) -> None:
        self.inner = TravelModel().proposer()
        self.name, self.streaming, self.seconds = self.inner.name, False, 0.0

    async def complete(self, request: Any) -> Any:
        start = time.process_time()
        try:
            return await self.inner.complete(request)
        finally:
            self.seconds += time.process_time() - start


def optimise_once() -> tuple[float, float, Any]:
    proposer = Timed()

    async def go() -> Any:
        return await an.optimize(
            weak(), an.travel.task_set(), proposer=proposer, budget=BUDGET, progress=False
        )

    gc.collect()
    start = time.process_time()
    opt = asyncio.run(go())
    return time.process_time() - start, proposer.seconds, opt


def plain_once(opt: Any) -> float:
    base = weak()
    plan = []
    for c in opt.candidates:
        names = {r.task for r in opt.evaluation.records if r.variant == c.id}
        tasks = an.TaskSet([t for t in opt.evaluation.tasks if t.name in names])
        plan.append(({c.id: c.agent(base)}, tasks))

    async def go() -> int:
        runs = 0
        for variants, tasks in plan:
            ev = await an.evaluate(variants, tasks, seed=opt.seed, progress=False)
            runs += len(ev.records)
        return runs

    gc.collect()
    start = time.process_time()
    runs = asyncio.run(go())
    assert runs == opt.metric_calls, (runs, opt.metric_calls)
    return time.process_time() - start


def run(rounds: int) -> None:
    _, _, opt = optimise_once()  # warm: imports, scipy, the dataset
    plain_once(opt)
    calls = opt.metric_calls
    mine, own, plain = [], [], []
    for r in range(rounds):
        if r % 2:
            p = plain_once(opt)
            total, proposer, _ = optimise_once()
        else:
            total, proposer, _ = optimise_once()
            p = plain_once(opt)
        mine.append(total)
        own.append(total - proposer)
        plain.append(p)
    whole = [a / b for a, b in zip(mine, plain, strict=True)]
    ratio = [a / b for a, b in zip(own, plain, strict=True)]
    q = statistics.quantiles(ratio, n=4, method="inclusive") if rounds > 1 else [ratio[0]] * 3
    print(
        f"\nThe optimiser, {calls} metric calls on the stand-in ({rounds} paired rounds): "
        f"{statistics.median(own) / calls * 1e6:.0f} us CPU per metric call, a plain "
        f"an.evaluate of the same runs {statistics.median(plain) / calls * 1e6:.0f} us: "
        f"{statistics.median(ratio):.2f}x [{q[0]:.2f}-{q[2]:.2f}]   target <= 1.3x"
    )
    print(
        f"  with the stand-in proposer's own time: {statistics.median(whole):.2f}x "
        f"({opt.proposer_calls} proposer calls, "
        f"{statistics.median(m - o for m, o in zip(mine, own, strict=True)) * 1e3:.0f} ms)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    run(args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
