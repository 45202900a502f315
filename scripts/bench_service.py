"""The service's per-task overhead (issue 29): the same work through agent.run, an in-process
Runtime (in memory, and on SQLite) and a DBOS-backed Runtime on SQLite; then where a DBOS task's
time goes, from a profile.

    .venv/bin/python scripts/bench_service.py [--quick] [--rounds N]

:func:`paired_row` is ``make bench``'s row for the service (issue 35): CPU per task of an
in-process ``an.Runtime`` against ``agent.run``, sampled in the same rounds.

Each round runs the four in turn (the order rotated per round), the same tasks of the bench's
travel work (5 model calls, 4 async tools) through ``max_concurrency=8``; the ratios are per
round against agent.run, reported as the median and the interquartile range over the rounds.
The profile counts and times the SQL statements of a DBOS task - agentnb's (its store and task
log) and DBOS's own (through SQLAlchemy) - beside its wall and CPU time, at three queue polling
intervals (DBOS runs its workflows on threads and a loop of its own: a statement is where both
spend their time).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import agentnb as an

sys.path.insert(0, str(Path(__file__).parent))
import bench
from bench import cpu, make_agent, paired

TASK = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"


async def direct(n: int) -> float:
    agent, gate = make_agent(), asyncio.Semaphore(8)

    async def one() -> None:
        async with gate:
            await agent.run(TASK)

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - start


async def through(rt: an.Runtime, n: int) -> float:
    start = time.perf_counter()
    ids = [await rt.submit(f"s{i}", TASK) for i in range(n)]
    for task_id in ids:
        assert (await rt.wait(task_id)).status == "done"
    return time.perf_counter() - start


def paired_row(rounds: int, runs: int) -> list[float]:
    """``make bench``'s service row: CPU per task of ``runs`` tasks through a fresh in-process
    ``an.Runtime`` (in memory, ``max_concurrency=8``, each task on a session of its own, all
    submitted then waited for), against ``runs`` plain ``agent.run`` one at a time on fresh
    sessions, sampled in the same rounds, the cyclic GC included on every side. Two more
    baselines in the same rounds say where the ratio goes: ``agent.run`` keeping each result
    (as the runtime keeps each task's session, trace and records, for ``result`` and
    ``get_trace``: the collector walks them), and ``agent.run`` 8 at a time (the runtime's
    concurrency: the collector walks 8 runs' objects at once). Returns the per-round ratios
    against ``agent.run`` one at a time."""
    agent = make_agent()

    async def plain() -> None:
        for _ in range(runs):
            result = await agent.run(TASK, session=an.Session())
            assert result.stop_reason == "final_answer"

    async def kept() -> None:
        results = [await agent.run(TASK, session=an.Session()) for _ in range(runs)]
        assert all(r.stop_reason == "final_answer" for r in results)

    async def eight() -> None:
        gate = asyncio.Semaphore(8)

        async def one() -> None:
            async with gate:
                assert (await agent.run(TASK, session=an.Session())).output

        await asyncio.gather(*(one() for _ in range(runs)))

    async def service() -> None:
        rt = an.Runtime(agent, max_concurrency=8)
        ids = [await rt.submit(f"s{i}", TASK) for i in range(runs)]
        for task_id in ids:
            assert (await rt.wait(task_id)).status == "done"
        await rt.close()

    samplers = {
        "run": lambda: cpu(plain, 1, runs),
        "kept": lambda: cpu(kept, 1, runs),
        "eight": lambda: cpu(eight, 1, runs),
        "rt": lambda: cpu(service, 1, runs),
    }
    s = paired(samplers, rounds)
    print(f"\nThe service in process: CPU per task, {runs} tasks a sample, {rounds} paired rounds")
    print(f"  {'agent.run, one at a time':<44}{statistics.median(s['run']) * 1e6:>9.1f} us")
    ratios = bench.row("an.Runtime in process (in memory)", s["rt"], s["run"], "target <= 1.3x")
    bench.row("  against agent.run keeping its results", s["rt"], s["kept"], "what it keeps")
    bench.row("  against agent.run 8 at a time", s["rt"], s["eight"], "its concurrency")
    bench.row("  agent.run keeping its results", s["kept"], s["run"], "the collector's")
    bench.row("  agent.run 8 at a time", s["eight"], s["run"], "the collector's")
    return ratios


def _folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="agentnb-bench-service-"))


async def in_memory(n: int) -> float:
    rt = an.Runtime(make_agent(), max_concurrency=8)
    try:
        return await through(rt, n)
    finally:
        await rt.close()


async def on_sqlite(n: int) -> float:
    rt = an.Runtime(make_agent(), store=an.SQLiteStore(_folder() / "app.db"), max_concurrency=8)
    try:
        return await through(rt, n)
    finally:
        await rt.close()


async def on_dbos(n: int) -> float:
    from agentnb.service import DBOS

    folder = _folder()
    backend = DBOS(f"sqlite:///{folder / 'dbos.db'}", polling=0.01)
    rt = an.Runtime(
        make_agent(), store=an.SQLiteStore(folder / "app.db"), max_concurrency=8, backend=backend
    )
    await backend.start()  # DBOS launches once per process: not a per-task cost
    try:
        return await through(rt, n)
    finally:
        await rt.close()


def rounds(n: int, count: int) -> dict[str, list[float]]:
    """Per-task wall time of each way, ``count`` rounds, the order rotated each round."""
    ways: dict[str, Callable[[int], Awaitable[float]]] = {
        "agent.run (8 at a time)": direct,
        "Runtime, in memory": in_memory,
        "Runtime, SQLite store": on_sqlite,
        "Runtime, DBOS + SQLite": on_dbos,
    }
    names = list(ways)
    out: dict[str, list[float]] = {name: [] for name in names}
    for r in range(count):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            out[name].append(asyncio.run(ways[name](n)) / n)
    return out


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    return q[0], statistics.median(values), q[-1]


class Statements:
    """SQL statements run per task and the time spent in them: agentnb's (its store and task
    log, :class:`~agentnb.storage.database.Statements`) and DBOS's (SQLAlchemy's engine)."""

    def __init__(self) -> None:
        self.ours = [0, 0.0]
        self.dbos = [0, 0.0]
        self._starts: dict[int, float] = {}

    def __enter__(self) -> Statements:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        from agentnb.storage import database

        original = self.original = database.Statements.__call__
        ours = self.ours

        def timed(this, sql, args=()):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return original(this, sql, args)
            finally:
                ours[0] += 1
                ours[1] += time.perf_counter() - start

        database.Statements.__call__ = timed  # type: ignore[method-assign,assignment]
        event.listen(Engine, "before_cursor_execute", self._before)
        event.listen(Engine, "after_cursor_execute", self._after)
        return self

    def _before(self, conn, cursor, *_):  # type: ignore[no-untyped-def]
        self._starts[id(cursor)] = time.perf_counter()

    def _after(self, conn, cursor, *_):  # type: ignore[no-untyped-def]
        self.dbos[0] += 1
        self.dbos[1] += time.perf_counter() - self._starts.pop(id(cursor), time.perf_counter())

    def __exit__(self, *exc: object) -> None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        from agentnb.storage import database

        database.Statements.__call__ = self.original  # type: ignore[method-assign,assignment]
        event.remove(Engine, "before_cursor_execute", self._before)
        event.remove(Engine, "after_cursor_execute", self._after)


#: Where CPU goes, by the function's file (first match wins); waits are left out.
PARTS = [
    ("sqlite3 (C), busy waits for the writer lock included", ("sqlite3",)),
    ("psycopg (Postgres driver)", ("psycopg",)),
    ("SQLAlchemy (DBOS's database layer)", ("/sqlalchemy/",)),
    ("DBOS", ("/dbos/",)),
    ("agentnb service: attempts, task log, leases", ("agentnb/service/",)),
    ("agentnb storage: stores, traces, codec", ("agentnb/storage/",)),
    ("agentnb runtime: the agent loop", ("agentnb/",)),
    ("json", ("json",)),
    ("asyncio", ("asyncio",)),
]
WAITS = ("acquire' of '_thread.lock", "SimpleQueue", "epoll", "time.sleep", "select.select")


def profile(n: int, polling: float) -> dict[str, float]:
    """One DBOS run of ``n`` tasks: wall and CPU per task, the statements each side ran, and
    own CPU by part over every thread (DBOS runs workflows on threads of its own)."""
    import cProfile
    import pstats
    import threading

    from agentnb.service import DBOS

    profiles: list[cProfile.Profile] = []
    original = threading.Thread.run

    def profiled(thread: threading.Thread) -> None:
        prof = cProfile.Profile()
        profiles.append(prof)
        prof.enable()
        try:
            original(thread)
        finally:
            prof.disable()

    async def run() -> float:
        folder = _folder()
        backend = DBOS(f"sqlite:///{folder / 'dbos.db'}", polling=polling)
        store = an.SQLiteStore(folder / "app.db")
        rt = an.Runtime(make_agent(), store=store, max_concurrency=8, backend=backend)
        await backend.start()
        here = cProfile.Profile()
        profiles.append(here)
        here.enable()
        try:
            return await through(rt, n)
        finally:
            here.disable()
            await rt.close()

    threading.Thread.run = profiled  # type: ignore[method-assign,assignment]
    try:
        with Statements() as counted:
            cpu0 = time.process_time()
            wall = asyncio.run(run())
            cpu = time.process_time() - cpu0
    finally:
        threading.Thread.run = original  # type: ignore[method-assign,assignment]
    parts: dict[str, float] = {}
    for prof in profiles:
        for (path, _line, func), row in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
            where = f"{path}:{func}"
            if any(w in where for w in WAITS):
                continue
            part = next((name for name, keys in PARTS if any(k in where for k in keys)), "other")
            parts[part] = parts.get(part, 0.0) + row[2] / n
    return {
        "wall": wall / n,
        "cpu": cpu / n,
        "ours": counted.ours[0] / n,
        "ours_s": counted.ours[1] / n,
        "dbos": counted.dbos[0] / n,
        "dbos_s": counted.dbos[1] / n,
        **{f"part:{k}": v for k, v in parts.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer tasks and rounds")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=100)
    args = parser.parse_args()
    n, count = (40, 3) if args.quick else (args.tasks, args.rounds)
    results = rounds(n, count)
    base = results["agent.run (8 at a time)"]
    print(f"The service: {n} tasks of the bench's work through max_concurrency=8, {count} rounds")
    print(f"  {'':<30}{'ms/task (median)':>18}{'x agent.run (median, IQR)':>30}")
    for name, per_task in results.items():
        ratios = [t / b for t, b in zip(per_task, base, strict=True)]
        lo, mid, hi = quartiles(ratios)
        print(
            f"  {name:<30}{statistics.median(per_task) * 1e3:>14.2f} ms"
            f"{mid:>16.1f}x  ({lo:.1f}-{hi:.1f})"
        )
    print("\nWhere a DBOS task's time goes (one run per queue polling interval; per task):")
    print(f"  {'polling':>8}{'wall':>10}{'CPU':>10}{'agentnb SQL':>22}{'DBOS SQL':>22}")
    profiled: dict[float, dict[str, float]] = {}
    for polling in (0.05, 0.01, 0.002):
        p = profiled[polling] = profile(n, polling)
        print(
            f"  {polling:>7g}s{p['wall'] * 1e3:>8.1f}ms{p['cpu'] * 1e3:>8.1f}ms"
            f"{p['ours']:>9.1f} = {p['ours_s'] * 1e3:>6.1f} ms"
            f"{p['dbos']:>9.1f} = {p['dbos_s'] * 1e3:>6.1f} ms"
        )
    print("  (SQL: statements per task, and the time spent in them, summed over threads)")
    print("\nOwn CPU per DBOS task at polling 0.01 s, over every thread (waits left out):")
    parts = [(k[5:], v) for k, v in profiled[0.01].items() if k.startswith("part:")]
    for name, seconds in sorted(parts, key=lambda x: -x[1]):
        print(f"    {name:<58}{seconds * 1e3:>7.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
