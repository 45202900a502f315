"""Runtime overhead of agentnb against a bare loop: paired ratios in one process.

    make bench                  # about 2 minutes; python scripts/bench.py [--rounds N]
    make bench-all              # also records, stores, evaluation sweep, service, proxy, view

A figure on a shared machine swings with its load; a *ratio* of two loops measured back to
back does not. So every figure below is a per-round ratio (each round samples every variant
once, in an order that rotates), reported as its median and interquartile range over the
rounds, with the load average before and after. Calls are counted under cProfile over every
code object (dataclass ``__init__``s that cProfile's table merges under one name included).

The work of the core rows: 5 model calls per run, the first 4 each asking for one of 4
instant async tools, the 5th answering. The model is a function of the request that parses
its reply from JSON text on every call (as a client does), so both loops get fresh dicts.
The bare loop is the minimal runtime of article 002 §4.2, as users write it (no copy of its
list per call). Rows:

* overhead: CPU per iteration (one model call + its tool), agentnb / bare; and one at a time,
  the paths the default takes: a subscriber on the session, tools awaited in the run's task,
  no tool timeout, sync tools in threads;
* calls per iteration over every code object (the hot path's budget: 200);
* growth: a model that reads ``request.messages`` (its length and last messages, as the test
  doubles do) in a session of N messages, against the same run on an empty session;
* multi-turn: 24 tools with large schemas, 12 turns, 3 batches of 3 calls a turn
  (``scripts/bench_multiturn.py``): CPU per tool call, against a plain executor and against
  the core iteration, the three sampled in the same rounds; and what argument validation
  (``agentnb/tools``) costs of it;
* the service: CPU per task of an in-process ``an.Runtime`` against ``agent.run``, sampled in
  the same rounds (``scripts/bench_service.py``; target <= 1.3x);
* start-up: ``import agentnb`` in a fresh interpreter of this environment;
* a warm evaluation: CPU per run of ``an.evaluate`` against the bare loop and ``agent.run``,
  the three in the same rounds (``scripts/bench_evaluate.py``; target: no more than the
  turn-4 commit's, 2459d3b, measured with the same script);
* native APIs: per-call CPU of ``ResponsesModel`` and ``AnthropicModel`` against
  ``OpenAIModel``, the same work on the same fake server (``scripts/bench_native.py``; target
  <= 1.3x);
* provenance: the run, then the same run with the detector over its tool results, with
  ``session.provenance()`` (every value traced), and with its saved HTML (the static copy a
  notebook keeps: flagged spans, steered calls, each argument's sources), paired: flagging's
  target <= 1.10x;
* the optimiser: CPU per metric call of ``an.optimize`` on the stand-in against a plain
  ``an.evaluate`` of the same runs, paired round by round (``scripts/bench_optimise.py``;
  target <= 1.3x).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))  # bench_multiturn, bench_proxy beside it

import bench_evaluate
import bench_multiturn as multiturn
import bench_native
import bench_optimise

import agentnb as an
from agentnb.models import FunctionModel

CALLS = 5  # model calls per run
TASK = "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"
TOOL_ARGS = [
    ("search_flights", {"departure": "上海", "destination": "北京", "date": "2025-01-10"}),
    ("search_weather", {"city": "北京", "date": "2025-01-10"}),
    ("search_hotels", {"city": "北京", "check_in_date": "2025-01-10"}),
    ("calculate_cost", {"items": [880, 520]}),
]


# -- the four instant tools, shared by both loops (async, as I/O tools are written) ------------
async def search_flights(departure: str, destination: str, date: str) -> dict:
    """Flights."""
    return {"flights": [{"flight_no": "MU5101", "price": 880}]}


async def search_weather(city: str, date: str) -> dict:
    """Weather."""
    return {"city": city, "condition": "晴", "min_c": -3, "max_c": 5}


async def search_hotels(city: str, check_in_date: str) -> dict:
    """Hotels."""
    return {"hotels": [{"name": "全季", "price": 520}]}


async def calculate_cost(items: list[float]) -> dict:
    """Sum."""
    return {"total": sum(items)}


FUNCS = {f.__name__: f for f in (search_flights, search_weather, search_hotels, calculate_cost)}


def reply_texts() -> list[str]:
    """The five replies as JSON text, as they arrive from a provider (parsed on every call)."""
    out = []
    for i, (name, args) in enumerate(TOOL_ARGS):
        function = {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}
        call = {"id": f"call_{i}", "type": "function", "function": function}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
    out.append({"role": "assistant", "content": "MU5101 880 元，全季 520 元，合计 1400 元。"})
    return [json.dumps(reply, ensure_ascii=False) for reply in out]


def history(n: int) -> list[dict[str, Any]]:
    """``n`` messages of earlier conversation (user/assistant pairs)."""
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": f"第 {i} 条消息：之前的对话内容。"} for i in range(n)]


# -- the bare loop: the minimal runtime of article 002 §4.2, as users write it -----------------
class BareModel:
    """Replies are parsed from JSON text on every call; the loop reads them as dicts."""

    def __init__(self, replies: list[str], delay: float = 0.0) -> None:
        self.replies, self.delay = replies, delay

    async def complete(self, messages: list[dict[str, Any]], turn: int) -> dict[str, Any]:
        if self.delay:
            await asyncio.sleep(self.delay)
        return json.loads(self.replies[turn])  # type: ignore[no-any-return]


async def bare_run(model: BareModel, task: str, past: list[dict[str, Any]]) -> str:
    messages = [{"role": "system", "content": "你是差旅助手。"}, *past]
    messages.append({"role": "user", "content": task})
    for turn in range(10):
        reply = await model.complete(messages, turn)
        messages.append(reply)
        calls = reply.get("tool_calls")
        if not calls:
            return str(reply["content"])
        for call in calls:
            fn = FUNCS[call["function"]["name"]]
            result = await fn(**json.loads(call["function"]["arguments"]))
            content = json.dumps(result, ensure_ascii=False)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    raise RuntimeError("no answer")


# -- agentnb -------------------------------------------------------------------------------------
def make_agent(
    delay: float = 0.0,
    threaded: bool = False,
    past: int = 0,
    isolated: bool = True,
    reads: str = "size",
    timeout: float | None = 60.0,
) -> an.Agent:
    """The same work. ``reads="size"``: the model reads ``request.size`` alone;
    ``"messages"``: it reads ``request.messages`` (its length, and back to the user's
    question), as the test doubles and clients do."""
    replies = reply_texts()

    def turn_of(request: Any) -> int:
        if reads == "messages":
            messages = request.messages
            k, turn = len(messages) - 1, 0
            while messages[k]["role"] != "user":
                turn += messages[k]["role"] == "tool"
                k -= 1
            return turn
        size = getattr(request, "size", None)  # agentnb < 0.2 had no size: count the list
        return ((len(request.messages) if size is None else size) - 2 - past) // 2

    async def respond(request: Any) -> Any:
        if delay:
            await asyncio.sleep(delay)
        return json.loads(replies[turn_of(request)])

    if threaded:  # the same tools written as plain functions, run in threads (the default)
        tools = [an.tool(_blocking(name)) for name in FUNCS]
    else:
        tools = [an.tool(f, isolated=isolated) for f in FUNCS.values()]
    model = FunctionModel(respond, keep_requests=0)  # kept requests would keep sessions alive
    return an.Agent("你是差旅助手。", tools, model=model, tool_timeout=timeout)


def _blocking(name: str) -> Callable[..., Any]:
    results: dict[str, Callable[..., Any]] = {
        "search_flights": lambda **kw: {"flights": [{"flight_no": "MU5101", "price": 880}]},
        "search_weather": lambda city, date: {"city": city, "condition": "晴"},
        "search_hotels": lambda **kw: {"hotels": [{"name": "全季", "price": 520}]},
        "calculate_cost": lambda items: {"total": sum(items)},
    }
    fn = results[name]

    def call(**kwargs: Any) -> Any:
        return fn(**kwargs)

    call.__name__ = name
    call.__signature__ = inspect.signature(FUNCS[name])  # type: ignore[attr-defined]
    call.__annotations__ = dict(FUNCS[name].__annotations__)
    return call


# -- measuring -----------------------------------------------------------------------------------
Once = Callable[[], Awaitable[Any]]


async def turn() -> None:
    """One turn of the event loop. The instant models here never suspend, so what the runs
    left for the loop (the finished task of an isolated tool: on 3.11 a task's first step is
    always scheduled, and runs on the next turn) waits until the sample's last turn, which is
    counted in the sample. An app's loop turns at every model reply; over a long pass with no
    turn the waiting tasks cost the cyclic GC's full collections (see :func:`long_pass`)."""
    await asyncio.sleep(0)


def cpu(once: Once, runs: int, per_run: int = CALLS) -> float:
    """CPU seconds per unit (model call by default) of ``runs`` runs of ``once``, in a new loop."""

    async def many() -> float:
        gc.collect()
        start = time.process_time()  # in the loop: its set-up and tear-down are not counted
        for _ in range(runs):
            await once()
        await turn()  # what the runs left for the loop is done, and counted, here
        return time.process_time() - start

    return asyncio.run(many()) / (runs * per_run)


def paired(samplers: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each round calls every sampler once, in an order rotated by one each round."""
    names = list(samplers)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            samples[name].append(samplers[name]())
    return samples


def spread(values: list[float]) -> tuple[float, float, float]:
    """(median, first quartile, third quartile)."""
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return median, q1, q3


def ratios(over: list[float], under: list[float]) -> list[float]:
    return [a / b for a, b in zip(over, under, strict=True)]


ROW = "  {:<44}{:>9.1f} us  {:>6.2f}x  [{:.2f}-{:.2f}]  {}"


def row(label: str, values: list[float], base: list[float], note: str = "") -> list[float]:
    r = ratios(values, base)
    median, q1, q3 = spread(r)
    print(ROW.format(label, statistics.median(values) * 1e6, median, q1, q3, note))
    return r


def calls_per_unit(once: Once, runs: int, per_run: int = CALLS) -> tuple[float, float]:
    """Calls per unit under cProfile: (over every code object, as cProfile's table shows it).
    The table merges code objects that share a file, line and name (every dataclass-generated
    ``__init__`` is ``<string>:2``), so it undercounts; the raw entries do not."""

    async def many() -> None:
        for _ in range(runs):
            await once()
        await turn()

    loop = asyncio.new_event_loop()
    loop.run_until_complete(many())  # warm caches
    gc.collect()
    profile = cProfile.Profile()
    profile.enable()
    loop.run_until_complete(many())
    profile.disable()
    loop.close()
    every = sum(entry.callcount for entry in profile.getstats())
    import pstats

    table = pstats.Stats(profile).total_calls
    return every / (runs * per_run), table / (runs * per_run)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def without_events(measure: Callable[[], float]) -> float:
    """``measure()`` with no event built but a run's first and last: an ablation, not an
    option (runs record what happened; see the README's events). With tools awaited inline and
    no timeout, what is left is the stage machinery alone: the readable floor the ratio can
    reach without giving up a guarantee."""
    from agentnb.events import RunStarted, RunStopped
    from agentnb.session.bus import EventBus

    record = EventBus.record

    class Unbuilt:
        time = 0.0

    unbuilt = Unbuilt()

    def not_built(bus: EventBus, run: Any, cls: type, at: float | None = None, /, **kw: Any) -> Any:
        if cls is RunStarted or cls is RunStopped:
            return record(bus, run, cls, at, **kw)
        bus.seq += 1
        unbuilt.time = time.monotonic() if at is None else at
        return unbuilt

    EventBus.record = not_built  # type: ignore[method-assign]
    try:
        return measure()
    finally:
        EventBus.record = record  # type: ignore[method-assign]


# -- the rows ------------------------------------------------------------------------------------
def overhead(rounds: int, runs: int) -> dict[str, list[float]]:
    bare_model = BareModel(reply_texts())
    agents = {
        "agentnb": make_agent(),
        "heard": make_agent(),
        "inline": make_agent(isolated=False),
        "no_timeout": make_agent(timeout=None),
        "threaded": make_agent(threaded=True),
        "floor": make_agent(isolated=False, timeout=None),
    }

    async def bare_once() -> None:
        assert (await bare_run(bare_model, TASK, [])).startswith("MU5101")

    def agentnb_once(name: str) -> Once:
        agent = agents[name]

        async def once() -> None:
            session = an.Session()
            if name == "heard":
                session.subscribe(lambda event: None)
            result = await agent.run(TASK, session=session)
            assert result.stop_reason == "final_answer" and result.iterations == CALLS

        return once

    samplers = {"bare": lambda: cpu(bare_once, runs)}
    for name in agents:
        n = max(runs // 4, 10) if name == "threaded" else runs
        samplers[name] = lambda name=name, n=n: cpu(agentnb_once(name), n)
    samplers["floor"] = lambda: without_events(lambda: cpu(agentnb_once("floor"), runs))
    s = paired(samplers, rounds)
    print(
        f"CPU per loop iteration, {rounds} paired rounds: median, ratio to the bare loop "
        "[interquartile range]"
    )
    print(ROW.format("bare dict loop", statistics.median(s["bare"]) * 1e6, 1, 1, 1, ""))
    s["ratio"] = row("agentnb (every feature on)", s["agentnb"], s["bare"], "target <= 6x")
    row("  with a subscriber on the session", s["heard"], s["bare"], "events published")
    row("  tools awaited in the run's task", s["inline"], s["bare"], "@an.tool(isolated=False)")
    row("  no tool timeout", s["no_timeout"], s["bare"], "tool_timeout=None")
    row("  sync tools in threads", s["threaded"], s["bare"], "the default for plain functions")
    row(
        "  the floor: no events, inline, no timeout",
        s["floor"],
        s["bare"],
        "an ablation, not an option",
    )
    calls = calls_per_unit(agentnb_once("agentnb"), 20)
    bare_calls = calls_per_unit(bare_once, 20)
    print(
        "\nPython-level calls per iteration (cProfile, over every code object; its table "
        "merges some, in brackets)"
    )
    print(f"  {'bare dict loop':<44}{bare_calls[0]:>9.0f}  [{bare_calls[1]:.0f}]")
    print(f"  {'agentnb':<44}{calls[0]:>9.0f}  [{calls[1]:.0f}]   target <= 200")
    return s


def client_agent() -> an.Agent:
    """The same work through ``OpenAIModel`` over ``httpx.MockTransport`` (the replies in turn,
    the body not read): what a real client costs as the session grows, encoding included."""
    import httpx

    texts = [json.loads(t) for t in reply_texts()]
    bodies = [
        json.dumps({"choices": [{"message": m, "finish_reason": "stop"}]}).encode() for m in texts
    ]
    turn = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        body = bodies[turn[0] % CALLS]
        turn[0] += 1
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    model = an.models.OpenAIModel(
        "bench",
        base_url="http://bench.invalid/v1",
        api_key="k",
        profile="openai",
        transport=httpx.MockTransport(handler),
    )
    tools = [an.tool(f) for f in FUNCS.values()]
    return an.Agent("你是差旅助手。", tools, model=model)


def growth(rounds: int, runs: int, sizes: tuple[int, ...] = (0, 1_000, 20_000)) -> None:
    """Per-iteration CPU on a session of N messages against the same run on an empty one,
    with a model that reads ``request.messages``, and with the OpenAI client."""
    agents = {"a": make_agent(reads="messages"), "c": client_agent()}
    pasts = {n: history(n) for n in sizes}
    bare_model = BareModel(reply_texts())

    def ours(key: str, n: int) -> Callable[[], float]:
        agent = agents[key]

        def sample() -> float:
            # One session a sample, built before the clock, and one run on it first (a
            # session's first request builds its message list once); each run then adds 10
            # messages (the N=0 session ends a sample with a few hundred).
            session = an.Session(pasts[n])
            asyncio.run(agent.run(TASK, session=session))

            async def once() -> None:
                result = await agent.run(TASK, session=session)
                assert result.stop_reason == "final_answer", result

            return cpu(once, runs)

        return sample

    def bare(n: int) -> Callable[[], float]:
        async def once() -> None:
            await bare_run(bare_model, TASK, pasts[n])

        return lambda: cpu(once, runs)

    samplers: dict[str, Callable[[], float]] = {}
    for n in sizes:
        samplers[f"a{n}"], samplers[f"c{n}"], samplers[f"b{n}"] = (
            ours("a", n),
            ours("c", n),
            bare(n),
        )
    s = paired(samplers, rounds)
    print(
        f"\nGrowth: CPU per iteration with N messages already in the session, {rounds} paired "
        "rounds; ratio to N=0 [interquartile range]"
    )
    print(
        f"  {'N':>6}  {'model reads request.messages':>31}  {'OpenAI client (mock HTTP)':>31}  "
        f"{'bare loop (copies its history per run)':>31}"
    )
    for n in sizes:
        cells = []
        for key in ("a", "c", "b"):
            values, base = s[f"{key}{n}"], s[f"{key}0"]
            median, q1, q3 = spread(ratios(values, base))
            us = statistics.median(values) * 1e6
            cells.append(f"{us:7.1f} us {median:5.2f}x [{q1:.2f}-{q3:.2f}]")
        target = "   target <= 1.3x" if n == sizes[-1] else ""
        print(f"  {n:>6}  {cells[0]:>31}  {cells[1]:>31}  {cells[2]:>31}{target}")


def multi_turn(rounds: int, runs: int) -> None:
    """The multi-turn shape against a plain executor and against the core iteration, all
    three sampled in the same rounds (the core's samples were taken a minute earlier, in the
    overhead row: its ratio's interquartile range was too narrow)."""
    agent = multiturn.make_agent()
    asyncio.run(multiturn.agentnb_session(agent))  # warm up: jsonschema's first validator
    per = multiturn.CALLS_PER_RUN
    core_agent = make_agent()

    async def core_once() -> None:
        result = await core_agent.run(TASK, session=an.Session())
        assert result.stop_reason == "final_answer" and result.iterations == CALLS

    s = paired(
        {
            "agentnb": lambda: cpu(lambda: multiturn.agentnb_session(agent), 1, per),
            "bare": lambda: cpu(multiturn.bare_session, 3, per),
            "core": lambda: cpu(core_once, runs),
        },
        rounds,
    )
    tools = {t.name: t for t in agent.tools}
    arguments = multiturn._arguments(0)
    validate = {
        kind: timeit.timeit(lambda t=tools[name]: t.validate(arguments), number=200) / 200
        for kind, name in (("pydantic", "search_00"), ("jsonschema", "book_00"))
    }
    share = sum(name.startswith("book") for name in multiturn.called_names()) / 9
    checked = validate["pydantic"] * (1 - share) + validate["jsonschema"] * share
    print(
        f"\nMulti-turn: {multiturn.TOOLS} tools with large schemas, {multiturn.TURNS} turns of "
        f"{multiturn.BATCHES} batches of {multiturn.BATCH} calls ({per} calls a session), "
        f"{rounds} paired rounds"
    )
    agentnb, bare = statistics.median(s["agentnb"]), statistics.median(s["bare"])
    median, q1, q3 = spread(ratios(s["agentnb"], s["bare"]))
    print(
        f"  CPU per tool call: agentnb {agentnb * 1e6:.1f} us, plain executor {bare * 1e6:.1f} "
        f"us: {median:.2f}x [{q1:.2f}-{q3:.2f}]"
    )
    median, q1, q3 = spread(ratios(s["agentnb"], s["core"]))
    print(
        f"  against the core iteration (sampled in the same rounds): {median:.2f}x "
        f"[{q1:.2f}-{q3:.2f}]   target <= 2x"
    )
    print(
        f"  of which argument validation (agentnb/tools): {checked * 1e6:.1f} us per call "
        f"(pydantic {validate['pydantic'] * 1e6:.1f} us, jsonschema "
        f"{validate['jsonschema'] * 1e6:.1f} us; {share:.0%} of the calls are to "
        "JSON-schema tools)"
    )


def service_row(rounds: int, runs: int) -> None:
    """The service in process against agent.run, per task (``scripts/bench_service.py``)."""
    import bench_service

    bench_service.paired_row(rounds, runs)


def long_pass(runs: int = 2_000) -> None:
    """CPU per iteration over one long pass with the collector left alone (the rows above
    collect before each sample), with a turn of the loop after each run as an app's has, and
    without: a coroutine that never suspends leaves each isolated tool's finished task waiting
    for the loop, and over thousands of runs they cost the cyclic GC's full collections.
    ``gc.callbacks`` time the collector."""
    spent: dict[int, float] = {}
    began = [0.0]

    def timer(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            spent[info["generation"]] = spent.get(info["generation"], 0.0)
            spent[info["generation"]] += time.perf_counter() - began[0]

    agent, bare_model = make_agent(), BareModel(reply_texts())

    async def ours() -> None:
        await agent.run(TASK, session=an.Session())

    async def bare() -> None:
        await bare_run(bare_model, TASK, [])

    async def many(once: Once, n: int, turns: bool) -> float:
        start = time.process_time()
        for _ in range(n):
            await once()
            if turns:
                await turn()
        return time.process_time() - start

    def measure(once: Once, n: int, turns: bool) -> tuple[float, float]:
        gc.collect()
        spent.clear()
        gc.callbacks.append(timer)
        try:
            total = asyncio.run(many(once, n, turns))
        finally:
            gc.callbacks.remove(timer)
        return total / (n * CALLS), sum(spent.values()) / total

    (a, a_gc), (b, _) = measure(ours, runs, True), measure(bare, runs * 10, True)
    c, c_gc = measure(ours, runs, False)
    print(
        f"\nOne long pass of {runs} runs, the collector left alone: agentnb {a * 1e6:.1f} us per "
        f"iteration ({a_gc:.0%} of it the cyclic GC), {a / b:.2f}x the bare loop's; with no turn "
        f"of the loop between runs {c * 1e6:.1f} us ({c_gc:.0%} GC: finished tool tasks wait)"
    )


def import_time(repeats: int = 5) -> None:
    """``import agentnb`` in fresh interpreters of this environment: wall time, and CPU time
    (on a busy machine the wall time includes waiting for a CPU)."""
    code = (
        "import time; t, c = time.perf_counter(), time.process_time(); import agentnb; "
        "print(time.perf_counter() - t, time.process_time() - c)"
    )
    walls, cpus = [], []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        wall, used = map(float, out.stdout.split())
        walls.append(wall)
        cpus.append(used)
    source = Path(an.__file__).parent
    compiled = all(
        (p.parent / "__pycache__").is_dir() for p in source.rglob("*.py") if p.name != "py.typed"
    )
    print(
        f"\nimport agentnb: wall {statistics.median(walls):.3f} s, CPU "
        f"{statistics.median(cpus):.3f} s (fresh interpreters, median of {repeats}; its "
        f"bytecode {'compiled' if compiled else 'NOT compiled: make dev compiles it'})   "
        "target <= 0.3 s"
    )


def first_summary(tasks: int = 30) -> None:
    """In a fresh interpreter: an evaluation sweep, then its first ``summary`` (its statistics
    need numpy alone; scipy.stats, for comparisons, is imported in the background)."""
    code = f"""
import asyncio, time
import agentnb as an
tasks = an.TaskSet(list(an.travel.task_set())[:{tasks}])
agent = an.travel.travel_agent()
started = time.perf_counter()
ev = asyncio.run(an.evaluate({{"a": agent, "b": agent.copy()}}, tasks, progress=False))
sweep = time.perf_counter() - started
started = time.perf_counter()
ev.summary
print(sweep, time.perf_counter() - started, len(ev.records))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    sweep, wait, runs = out.stdout.split()
    print(
        f"\nThe first Evaluation.summary in a fresh process, after a sweep of {runs} runs: "
        f"the sweep {float(sweep):.2f} s, the summary {float(wait) * 1000:.0f} ms   "
        "target: no longer than the sweep"
    )


def provenance_cost(rounds: int, runs: int) -> None:
    """What flagging costs (issue 39): the core run, then the same run and the detector over
    its tool results (what a check or the view asks when it reads a run), and the same run
    and its whole provenance (every argument and figure traced), paired in the same rounds.
    Nothing is computed during a run: scanning is lazy, so the run alone pays 0."""
    agent = make_agent()
    from agentnb.provenance import scan

    def once_with(extra: str) -> Once:
        async def once() -> None:
            session = an.Session()
            result = await agent.run(TASK, session=session)
            assert result.stop_reason == "final_answer"
            if extra == "flag":
                for wire in session.transcript.wires:
                    if wire.get("role") == "tool":
                        scan(wire["content"])
            elif extra == "trace":
                assert not session.provenance().steered
            elif extra == "html":  # what a notebook saves: the static copy, its marks traced
                assert "anb-chip" in session.static_bundle()["text/html"]

        return once

    samplers = {name: (lambda name=name: cpu(once_with(name), runs)) for name in
                ("run", "flag", "trace", "html")}  # fmt: skip
    s = paired(samplers, rounds)
    print(f"\nprovenance, {rounds} paired rounds: CPU per loop iteration, ratio to the run alone")
    print(ROW.format("the run alone", statistics.median(s["run"]) * 1e6, 1, 1, 1, ""))
    row("  + flag its tool results (detector)", s["flag"], s["run"], "target <= 1.10x")
    row("  + session.provenance() (every value)", s["trace"], s["run"], "lazy: when asked")
    row("  + its saved HTML (marks and chips)", s["html"], s["run"], "when shown")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25, help="paired rounds per row")
    parser.add_argument("--runs", type=int, default=40, help="runs per sample")
    parser.add_argument("--all", action="store_true", help="also the slower rows (bench-all)")
    parser.add_argument("--quick", action="store_true", help="few rounds (a smoke check)")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.runs = 5, 10
    started = time.perf_counter()
    print(
        f"agentnb {an.__version__} runtime overhead (python {sys.version.split()[0]}); {load()}\n"
    )
    overhead(args.rounds, args.runs)
    growth(max(args.rounds // 2, 5), max(args.runs // 2, 5))
    bench_native.native_models(max(args.rounds // 2, 5), max(args.runs // 2, 5))
    multi_turn(max(args.rounds // 2, 5), args.runs)
    service_row(args.rounds, args.runs)
    provenance_cost(max(args.rounds // 2, 5), args.runs)
    long_pass()
    import_time()
    first_summary()
    bench_evaluate.warm_evaluation(max(args.rounds // 2, 5), args.runs)
    bench_optimise.run(max(args.rounds // 4, 3))
    if args.all:
        import bench_more  # type: ignore[import-not-found]

        bench_more.run_all(args.quick)
    print(f"\n{load()}; the bench took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
