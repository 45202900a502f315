"""The stand-in reads any request and any instructions in time linear in their length.

Its reading runs on the event loop. Patterns with an unbounded gap between alternatives read
ordinary long text in quadratic time: "预算" and 32k spaces held TravelModel.complete 47.5 s,
instructions of "无论" repeated to 32k characters held understood() 5 s. Each test reads a
text made of blocks (a piece repeated) and the same text with every block eight times
longer: every run, and the count of everything, grows eightfold. A linear reading costs
about 8 times as much, a quadratic one 64 times; the bound (24x) leaves room for a busy
machine's noise.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentnb.models import ModelRequest
from agentnb.travel import TravelModel

MODEL = TravelModel()
#: Pieces of what people write to the stand-in: cue words, cities, dates, numbers, the
#: punctuation its rules split on, brackets, and runs of spaces and newlines.
PIECES = [
    " ", "   ", "\n", "1", "2000", "3k", "¥", "，", ",", "。", ".", "无论", "不管", "unless ",
    "除非", "预算", "budget ", "北京", "上海", "从", "去", "到", "周五", "明天", "1月18号", "酒店",
    "hotel ", "near ", "天气", "航班", "晚", "个", "nights ", "不要", "别", "先查", "first ",
    "only ", "（", "(", "）", ")", "a", "the ", "to ", "from ", "Beijing ", "two ", "thousand ",
    "最便宜", "cheapest ", "便宜", "直接", "用英文", "不要编造", "；", ";", "？", ":", "：",
    "2025-01-10", "book ", "订", "```", '"', "{", "}",
]  # fmt: skip


def _request(text: str) -> None:
    system = {"role": "system", "content": "你是差旅助手。"}
    asyncio.run(MODEL.complete(ModelRequest([system, {"role": "user", "content": text}], [])))


def _instructions(text: str) -> None:
    MODEL.understood(text)


def _ratio(read: Callable[[str], None], blocks: list[tuple[str, int]]) -> tuple[float, float]:
    """The least of three CPU times (other processes on the machine do not count) of reading
    the text of ``blocks`` (a piece, how many times) and of reading it with every block 8
    times longer, and their ratio."""
    texts = {n: "".join(piece * (count * n) for piece, count in blocks) for n in (1, 8)}
    times: dict[int, list[float]] = {1: [], 8: []}
    gc.collect()
    for _ in range(3):
        for n, text in texts.items():
            start = time.process_time()
            read(text)
            times[n].append(time.process_time() - start)
    small, big = min(times[1]), min(times[8])
    return big / max(small, 0.005), big


def test_a_long_run_of_spaces_after_a_budget_word_is_read_in_linear_time():
    """The word "预算" and 32k spaces: 47.5 s in TravelModel.complete (2k: 0.18 s, 8k: 3.1 s)."""
    ratio, took = _ratio(_request, [("预算", 1), (" ", 2000)])
    assert ratio <= 24, took


def test_instructions_of_one_concession_word_repeated_are_read_in_linear_time():
    """Instructions of "无论" repeated: 5.0 s in understood() at 32k characters."""
    ratio, took = _ratio(_instructions, [("无论", 1000)])
    assert ratio <= 24, took


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    blocks=st.lists(
        st.tuples(st.sampled_from(PIECES), st.integers(1, 40)), min_size=1, max_size=40
    ),
    where=st.sampled_from(["request", "instructions"]),
)
def test_any_text_is_read_in_time_linear_in_its_length(blocks, where):
    size = sum(len(piece) * count for piece, count in blocks)
    blocks = [(piece, count * max(1, 1500 // size)) for piece, count in blocks]  # ~1.5k chars
    read = _request if where == "request" else _instructions
    ratio, took = _ratio(read, blocks)
    assert ratio <= 24, (where, blocks[:8], took)
