"""The optimiser's proposer: a sync function that blocks never holds the event loop (the
hostile test's M7), and a reply that proposes nothing says why (L3)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

import agentnb as an
from agentnb.evals.optimise import Texts, parse_reply
from agentnb.models import FunctionModel
from agentnb.travel import TravelModel
from tests.helpers import eventually

WEAK = "你是差旅助手。"


def weak_agent():
    return an.travel.travel_agent(model=TravelModel("fabricate"), instructions=WEAK)


class Blocking:
    """A sync proposer that blocks its caller until the test ends (at most ``limit`` s, so the
    code before the fix, which ran it on the event loop, fails instead of hanging)."""

    def __init__(self, limit: float = 10.0) -> None:
        self.limit = limit
        self.entered = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()

    def __call__(self, request):
        self.entered.set()
        self.release.wait(self.limit)
        self.returned.set()
        return "{}"


@pytest.fixture
def blocking():
    proposer = Blocking()
    yield proposer
    proposer.release.set()  # its worker thread ends with the test


async def test_a_blocking_sync_proposer_is_stopped_by_the_timeout_and_said_so(blocking):
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            if blocking.entered.is_set():
                ticks += 1

    beat = asyncio.create_task(ticker())
    try:
        opt = await an.optimize(
            weak_agent(),
            an.travel.task_set(),
            proposer=FunctionModel(blocking, name="blocking"),
            budget=150,
            timeout=2,
            patience=1,
            progress=False,
        )
    finally:
        beat.cancel()
    assert not blocking.returned.is_set(), "the optimisation waited for the blocked function"
    assert [s["reason"] for s in opt.steps] == ["the proposer did not answer within 2 s"]
    assert opt.stop_reason.endswith("never answered usefully: did not answer within 2 s")
    assert ticks > 0, "the event loop was held while the proposer blocked"
    assert opt.metric_calls == 39 and opt.proposer_calls == 0  # no reply: nothing metered


async def test_stop_ends_an_optimisation_whose_sync_proposer_blocks(blocking):
    model = FunctionModel(blocking, name="blocking")
    opt = an.evals.optimise.start(
        weak_agent(), an.travel.task_set(), proposer=model, budget=150, timeout=None
    )
    await eventually(blocking.entered.is_set, 60, what="the proposer's function entered")
    opt.cancel()  # the view's Stop, while the proposer's function is blocked
    await opt.wait()
    assert opt.done and "stopped by request" in opt.stop_reason
    assert not blocking.returned.is_set(), "Stop waited for the blocked function"
    assert len(model.requests) == 1  # the model itself was asked, as given


async def test_a_sync_proposer_still_reads_and_is_metered_as_before():
    """The thread changes nothing else: its replies, its requests, the meter, the seed."""
    line = "你必须使用工具获取实时信息，只有工具返回结果后才能回答用户问题；不要编造航班、天气或酒店数据。"
    asked = []

    def propose(request):
        asked.append(threading.current_thread().name)
        return {"content": json.dumps({"rationale": "tools", "instructions": WEAK + "\n" + line})}

    model = FunctionModel(propose, name="sync-proposer")
    runs = [
        await an.optimize(
            weak_agent(), an.travel.task_set(), proposer=model, budget=150, patience=1,
            progress=False, seed=0,
        )
        for _ in range(2)
    ]  # fmt: skip
    first, again = runs
    assert first.steps == again.steps and first.candidates[1].texts.instructions.endswith(line)
    assert first.proposer_calls == len(first.steps) == len(asked) // 2
    assert all(name != threading.main_thread().name for name in asked)
    assert model.requests and first.proposer.name == "sync-proposer"
    assert first.stop_reason.startswith("nothing new in 1 step in a row (patience=1)")


TOOLS = "(the tools: 'search_flights', 'search_weather', 'search_hotels', 'calculate_cost')"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({"instructions": 42}, "its instructions are not text (42)"),
        ({"instructions": ""}, "its instructions are empty"),
        ({"instructions": ["a", "b"]}, 'its instructions are not text (["a", "b"])'),
        ({"tools": {"no_such_tool": "x"}}, f"it describes an unknown tool 'no_such_tool' {TOOLS}"),
        ({"tools": {"search_flights": 7}}, "its description of 'search_flights' is not text (7)"),
        ({"tools": {"search_flights": " "}}, "its description of 'search_flights' is empty"),
        ({"tools": "new text"}, 'its tools are not an object of descriptions ("new text")'),
    ],
)
def test_a_reply_that_changes_nothing_says_what_was_wrong_with_it(reply, problem):
    """Each got 'the reply changes nothing', unlike the same mistake beside a good text
    (the hostile test's L3)."""
    current = Texts.of(an.travel.travel_agent(instructions=WEAK))
    proposal = parse_reply(json.dumps(reply, ensure_ascii=False), current)
    assert proposal.texts is None
    assert proposal.problem == f"the reply changes nothing: {problem}"
    # beside a usable text the same mistake is ignored, and said
    both = parse_reply(json.dumps({**reply, "instructions": "新的说明"}), current)
    if "instructions" not in reply:
        assert both.texts is not None and both.texts.instructions == "新的说明"
        assert both.problem == f"ignored what it could not use: {problem}"


def test_a_reply_identical_to_the_current_texts_changes_nothing_and_says_only_that():
    current = Texts.of(an.travel.travel_agent(instructions=WEAK))
    same = {"instructions": WEAK, "tools": {"search_flights": current.tools["search_flights"]}}
    proposal = parse_reply(json.dumps(same, ensure_ascii=False), current)
    assert proposal.texts is None and proposal.problem == "the reply changes nothing"


GOOD = json.dumps({"rationale": "tools first", "instructions": WEAK + "\n先调用工具，再回答。"})


async def test_a_reply_nested_past_the_decoders_depth_ends_nothing_and_keeps_its_proposal():
    """A proposal followed by ``{"a":`` x 3000: json's RecursionError escaped ``ask`` and
    ended the run; the Optimisation was never returned and the proposal was lost (H1).
    Any depth, any tail: reading is bounded in depth, and a reply never ends the run."""
    replies = iter([GOOD + '{"a":' * 3000, '{"a":' * 5000 + "}" * 5000])

    def propose(request):
        return next(replies, "{}")

    opt = await an.optimize(
        weak_agent(), an.travel.task_set(), proposer=FunctionModel(propose, name="deep"),
        budget=150, patience=2, progress=False,
    )  # fmt: skip
    assert opt.error is None and opt.done
    assert opt.candidates[1].texts.instructions.endswith("先调用工具，再回答。")
    deep = [s for s in opt.steps if "deeper than 64 levels" in s["reason"]]
    assert deep and deep[0]["event"] == "no_proposal"


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _costs(small: str, big: str) -> tuple[float, float, int]:
    """The least CPU time of five reads of each (interleaved; CPU time, so other processes on
    the machine do not count; the collector paused: the cost of the reading, not of the heap
    the other tests left) and the peak memory of reading big."""
    import gc
    import time
    import tracemalloc

    current = Texts("x", {})
    times: dict[str, list[float]] = {"small": [], "big": []}
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            for name, reply in (("small", small), ("big", big)):
                start = time.process_time()
                parse_reply(reply, current)
                times[name].append(time.process_time() - start)
    finally:
        gc.enable()
    tracemalloc.start()
    parse_reply(big, current)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return min(times["small"]), min(times["big"]), peak


@pytest.mark.parametrize(
    "piece",
    [
        _nested(600),  # the hostile reply: objects 600 deep (13-17 s and 680 MB for 57 KB)
        _nested(40) + " x}",  # broken spans, each decodable inside
        '{"a":' * 50,  # never closed
        "```py\n{",  # fences never closed
        '{"instructions": "' + "长" * 200 + '"} ',  # ordinary proposals, many
    ],
)
def test_reading_a_reply_is_linear_in_its_length_with_bounded_memory(piece):
    """Reading a proposer's reply decoded from every '{', twice, on the event loop: a 57 KB
    reply held the loop 13-17 s (H2). Now 8 times the reply costs about 8 times the CPU
    time (24x allows for the CPU's caches, which a small reply fits in; a quadratic read
    costs 64x) and memory stays a small multiple of the reply."""
    small = piece * max(1, 100_000 // len(piece))
    big = small * 8
    t_small, t_big, peak = _costs(small, big)
    assert t_big <= 24 * max(t_small, 1e-3), (t_small, t_big)
    assert peak <= 60 * len(big.encode()) + 2_000_000, peak


def test_a_reply_longer_than_the_read_limit_is_no_proposal_saying_so():
    from agentnb.evals.optimise.reply import MAX_CHARS

    proposal = parse_reply(GOOD + " " * MAX_CHARS, Texts("x", {}))
    assert proposal.texts is None and "more than the 1,000,000 a proposal is read in" in (
        proposal.problem
    )
    assert len(proposal.reply) < 3000  # the history does not keep the whole reply


async def test_an_optimiser_whose_loop_fails_hands_back_what_it_decided(monkeypatch):
    """A failure of the loop itself (a bug, not a run's error) raised out of an.optimize:
    the Optimisation, its runs and candidates were lost (H1). It is handed back."""
    from agentnb.evals.optimise import loop

    async def broken(*args, **kwargs):
        raise RuntimeError("a bug in the loop")

    monkeypatch.setattr(loop, "_decide", broken)
    opt = await an.optimize(
        weak_agent(), an.travel.task_set(), proposer=FunctionModel(lambda r: GOOD, name="p"),
        budget=150, progress=False,
    )  # fmt: skip
    assert isinstance(opt.error, RuntimeError)
    assert opt.stop_reason == "failed: RuntimeError: a bug in the loop"
    assert opt.metric_calls == 39 and len(opt.candidates) == 2  # the start's runs kept
    assert opt.candidates[1].status == "stopped"
