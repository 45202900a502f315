"""The slower rows of the bench (``make bench-all``): the record and the stores over time,
an evaluation sweep, many concurrent runs, the service, the recording proxy.

    python scripts/bench.py --all      # after the core rows; or run_all() from here
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time

from bench import TASK, BareModel, bare_run, calculate_cost, history, make_agent, reply_texts

import agentnb as an
from agentnb.models import FunctionModel


def concurrent(run_once, n: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    async def all_at_once() -> None:
        await asyncio.gather(*(run_once() for _ in range(n)))

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(all_at_once())
    return time.perf_counter() - wall, time.process_time() - cpu


def records(iterations: int = 2_000, runs_on_one_session: int = 600) -> None:
    """The record stays linear: a long run's trace, and many runs' requests on one session."""
    import tempfile
    import tracemalloc
    from pathlib import Path

    replies = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "calculate_cost", "arguments": '{"items": [880, 520]}'},
                }
            ],
        }
    ] * iterations + ["done"]
    agent = an.Agent(
        "你是差旅助手。",
        [an.tool(calculate_cost)],
        model=an.models.ScriptedModel(replies),
        max_iterations=iterations + 1,
        repeat_limit=0,
    )
    result = agent.run_sync("go")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        path = result.trace.save(Path(tmp) / "long.jsonl")
        saved = time.perf_counter() - start
        start = time.perf_counter()
        loaded = an.Trace.load(path)
        load = time.perf_counter() - start
        size = path.stat().st_size
    assert len(loaded) == len(result.events)
    print(
        f"\nA {iterations:,}-iteration run: {len(result.events):,} events, trace file "
        f"{size / 1e6:.1f} MB, save {saved:.2f} s, load {load:.2f} s"
        "   target < 2 s, < 20 MB"
    )

    one = an.Agent("你是差旅助手。", model=FunctionModel(lambda request: "好的"))
    session = an.Session()
    tracemalloc.start()
    marks = {}
    for i in range(1, runs_on_one_session + 1):
        one.run_sync("你好", session=session)
        if i in (runs_on_one_session // 2, runs_on_one_session):
            marks[i] = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    half, full = marks[runs_on_one_session // 2], marks[runs_on_one_session]
    print(
        f"{runs_on_one_session} runs on one session: {half / 1e6:.1f} MB traced after "
        f"{runs_on_one_session // 2}, {full / 1e6:.1f} MB after {runs_on_one_session} "
        f"(x{full / half:.2f}; linear is x2, quadratic x4), "
        f"{(full - half) / (runs_on_one_session // 2) / 1e3:.2f} KB per run"
    )


def sessions_over_time(quick: bool) -> None:
    """Assembling long histories under each policy; SQLite commits and loads."""
    import tempfile
    from pathlib import Path

    n = 2_000 if quick else 10_000
    past = history(n)
    print(f"\nAssemble a {n:,}-message history into a 4,000-token window (ms, median of 5)")
    policies = {
        "keep_all (no window)": (an.KeepAll(), None),
        "drop_oldest": (an.DropOldest(), 4000),
        "keep_last_turns(5)": (an.KeepLastTurns(5), 4000),
        "summarise_oldest": (an.SummariseOldest(), 4000),
    }
    for label, (policy, window) in policies.items():
        agent = an.Agent(
            "你是差旅助手。",
            model=FunctionModel(lambda r: "好的"),
            context_window=window,
            reply_reserve=500,
            context=policy,
        )

        async def assemble_once(agent: an.Agent = agent) -> float:
            run = agent.start("最新的问题", session=an.Session(past))
            await run.step()  # restore
            start = time.perf_counter()
            await run.step()  # assemble
            took = time.perf_counter() - start
            await run.finish()
            return took

        times = [asyncio.run(assemble_once()) for _ in range(5)]
        print(f"  {label:<24}{statistics.median(times) * 1000:>8.2f} ms")

    with tempfile.TemporaryDirectory() as tmp:
        store = an.SQLiteStore(Path(tmp) / "bench.db")
        session = an.Session(id="rounds", store=store)
        rounds = 200
        start = time.perf_counter()
        for i in range(rounds):
            session.append({"role": "user", "content": f"第 {i} 轮"})  # one commit each
        per_round = (time.perf_counter() - start) / rounds
        print(f"\nSQLite commit per round (WAL): {per_round * 1000:.2f} ms")
        big = 20_000 if quick else 100_000
        store.commit("big", 0, history(big))
        start = time.perf_counter()
        loaded = store.load("big")
        load = time.perf_counter() - start
        assert len(loaded) == big
        print(f"Load a {big:,}-message session from SQLite: {load:.2f} s")
        store.close()


def proxy_overhead(quick: bool) -> None:
    """The recording proxy's added latency (scripts/bench_proxy.py; needs the observe extra)."""
    try:
        from bench_proxy import proxy_overhead as measure
    except ImportError as exc:
        print(f"\nRecording proxy overhead: skipped ({exc}; pip install 'agentnb[observe]')")
        return
    measure(quick)


def evaluation_sweep(quick: bool) -> None:
    """an.evaluate: 30 travel tasks x 4 TravelModel variants x 5 repeats = 600 runs, checks
    included (target: under 10 s wall on 2 cores)."""
    from agentnb.travel import INSTRUCTIONS, TravelModel

    tasks = an.TaskSet(list(an.travel.task_set())[:30])
    base = an.travel.travel_agent()
    rule = next(line for line in INSTRUCTIONS.splitlines(True) if "必须使用工具" in line)
    variants = {
        "article": base,
        "no_tools_rule": base.copy(
            instructions=INSTRUCTIONS.replace(rule, ""), model=TravelModel("fabricate")
        ),
        "loop": base.copy(model=TravelModel("loop")),
        "article_schemas": an.travel.travel_agent(schemas="article"),
    }
    repeats = 1 if quick else 5
    imported = time.perf_counter()
    import scipy.stats  # noqa: F401  (once per process; an.evaluate warms it up in a thread)

    imported = time.perf_counter() - imported
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    ev = asyncio.run(an.evaluate(variants, tasks, repeats=repeats, progress=False))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    runs = len(ev.records)
    summary = time.perf_counter()
    rates = ev.summary["success_rate"].round(2).to_dict()
    summary = time.perf_counter() - summary
    print(
        f"\nan.evaluate: {len(tasks)} tasks x {len(variants)} variants x {repeats} repeats "
        f"= {runs} runs on TravelModel (concurrency 8)"
    )
    print(
        f"  wall {wall:6.2f} s   cpu {cpu:6.2f} s   {wall / runs * 1e3:.1f} ms per run   "
        "target wall < 10 s"
    )
    print(
        f"  summary {summary:.2f} s (import scipy.stats, once per process: {imported:.2f} s); "
        f"success rates {rates}"
    )


# -- the service (agentnb.Runtime) -----------------------------------------------------
def service(quick: bool) -> None:
    """Per-task overhead of an.Runtime (in process, and on DBOS) against agent.run; and
    1,000 queued tasks through max_concurrency=8 with a model that sleeps 10 ms."""
    import tempfile
    from pathlib import Path

    from agentnb.service import DBOS

    n = 100 if quick else 400
    task = TASK

    async def direct() -> float:
        agent, gate = make_agent(), asyncio.Semaphore(8)

        async def one() -> None:
            async with gate:
                await agent.run(task)

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - start

    async def through(rt: an.Runtime, count: int) -> float:
        start = time.perf_counter()
        ids = [await rt.submit(f"s{i}", task) for i in range(count)]
        for task_id in ids:
            assert (await rt.wait(task_id)).status == "done"
        wall = time.perf_counter() - start
        await rt.close()
        return wall

    async def measure() -> tuple[float, float, float, int]:
        base = await direct()
        local = await through(an.Runtime(make_agent(), max_concurrency=8), n)
        folder = Path(tempfile.mkdtemp(prefix="agentnb-bench-"))
        backend = DBOS(f"sqlite:///{folder / 'dbos.db'}", polling=0.01)
        store = an.SQLiteStore(folder / "app.db")
        durable = an.Runtime(make_agent(), store=store, max_concurrency=8, backend=backend)
        await backend.start()  # DBOS launches once per process: not a per-task cost
        m = max(n // 4, 25)
        return base, local, await through(durable, m), m

    base, local, durable, m = asyncio.run(measure())
    print(f"\nThe service: {n} tasks of the same work through max_concurrency=8 (wall per task)")
    row = "  {:<40}{:>9.2f} ms {:>7.2f}x"
    print(row.format("agent.run directly (8 at a time)", base / n * 1e3, 1.0))
    print(row.format("an.Runtime, in process", local / n * 1e3, local / base))
    print(
        row.format(
            f"an.Runtime on DBOS+SQLite ({m} tasks)", durable / m * 1e3, durable / m / (base / n)
        )
    )

    async def sleepy(request):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.01)
        return {"role": "assistant", "content": "ok"}

    async def queued() -> tuple[float, int]:
        rt = an.Runtime(an.Agent(model=FunctionModel(sleepy)), max_concurrency=8)
        wall = await through(rt, 1000)
        return wall, rt.backend.peak  # type: ignore[attr-defined]

    wall, peak = asyncio.run(queued())
    ideal = 1000 * 0.010 / 8
    print(
        f"  1,000 queued tasks, model sleeps 10 ms: wall {wall:.2f} s, ideal {ideal:.2f} s "
        f"(1,000 x 10 ms / 8): {wall / ideal:.2f}x; at most {peak} running at once"
    )


def run_all(quick: bool) -> None:
    records(500 if quick else 2_000, 150 if quick else 600)
    sessions_over_time(quick)
    evaluation_sweep(quick)
    n = 100 if quick else 500
    slow_agent = make_agent(delay=0.01)
    slow_bare = BareModel(reply_texts(), delay=0.01)

    async def slow_bare_once() -> None:
        await bare_run(slow_bare, TASK, [])

    async def slow_agentnb_once() -> None:
        await slow_agent.run(TASK)

    bw, bc = concurrent(slow_bare_once, n)
    aw, ac = concurrent(slow_agentnb_once, n)
    print(f"\n{n} concurrent runs, model sleeps 10 ms per call (5 calls per run)")
    print(f"  {'bare dict loop':<34}wall {bw:6.3f} s   cpu {bc:6.3f} s")
    print(f"  {'agentnb':<34}wall {aw:6.3f} s   cpu {ac:6.3f} s   target wall < 0.5 s")
    service(quick)
    proxy_overhead(quick)
