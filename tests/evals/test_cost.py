"""Money: a run's cost is its tokens at the table's prices; unknown is unknown, never 0."""

from __future__ import annotations

import asyncio
import math

import pytest

import agentnb as an
from agentnb.errors import ConfigurationError
from agentnb.evals.cost import PRICES, PriceTable, money
from agentnb.messages import AssistantMessage
from agentnb.models import FunctionModel, ModelResponse, Usage


def _model(name: str, prompt: int, completion: int, *, delay: float = 0.0):
    """A model whose every reply reports ``prompt``/``completion`` tokens."""

    async def reply(request):
        if delay:
            await asyncio.sleep(delay)
        return ModelResponse(
            AssistantMessage(content="done"), Usage(prompt, completion, prompt + completion)
        )

    return FunctionModel(reply, name=name)


@pytest.fixture
def prices():
    saved = PRICES.copy()
    yield PRICES
    for name in list(PRICES):
        del PRICES[name]
    for name in saved:
        PRICES[name] = saved.lookup(name)


def test_the_table_matches_exact_names_first_then_the_longest_pattern():
    table = PriceTable()
    table["gpt-x*"] = (1.0, 2.0)
    table.set("gpt-x-mini*", input=0.1, output=0.4)
    table["gpt-x-mini-2"] = (0.5, 0.5)
    assert table.lookup("gpt-x-large").input == 1.0
    assert table.lookup("gpt-x-mini-1").input == 0.1
    assert table.lookup("gpt-x-mini-2").input == 0.5
    assert table.lookup("other") is None and table.cost("other", 10, 10) is None
    assert table.cost("gpt-x-large", 1_000_000, 500_000) == pytest.approx(1.0 + 1.0)
    with pytest.raises(ConfigurationError, match="per million"):
        table["bad"] = (-1, 0)
    with pytest.raises(ConfigurationError, match=r"\(input, output\)"):
        table["bad"] = 3  # type: ignore[assignment]
    with pytest.raises(KeyError, match="no price for 'other'"):
        table["other"]


def test_money_says_unknown_never_zero():
    assert money(None) == money(float("nan")) == "unknown"
    assert money(0.0) == "$0" and money(0.01234) == "$0.0123" and money(12.5) == "$12.50"


async def test_a_hand_built_evaluation_costs_its_tokens_times_the_prices(prices):
    prices["priced-model"] = (2.0, 8.0)  # USD per million tokens
    tasks = an.TaskSet([an.Task("a", "hi"), an.Task("b", "hello")])
    # a two-turn task: the earlier turn's call is spent too
    two_turns = an.TaskSet([an.Task("c", "again", history=("first",))])
    priced = an.Agent("x", [], model=_model("priced-model", 1000, 250))
    unknown = an.Agent("x", [], model=_model("mystery-model", 1000, 250))
    ev = await an.evaluate({"priced": priced, "unknown": unknown}, tasks, progress=False)
    runs = ev.runs.set_index(["variant", "task"])
    one_run = (1000 * 2.0 + 250 * 8.0) / 1e6
    assert runs.loc[("priced", "a"), "cost"] == pytest.approx(one_run)
    assert runs.loc[("priced", "a"), "prompt_tokens"] == 1000
    assert runs.loc[("priced", "a"), "completion_tokens"] == 250
    assert math.isnan(runs.loc[("unknown", "a"), "cost"])  # unknown, not 0
    s = ev.summary
    assert s.loc["priced", "spend"] == pytest.approx(2 * one_run)
    assert math.isnan(s.loc["unknown", "spend"]) and math.isnan(s.loc["unknown", "spend_completed"])
    assert s.loc["priced", "prompt_tokens"] == 2000
    ev2 = await an.evaluate({"priced": priced}, two_turns, progress=False)
    assert ev2.records[0].prompt_tokens == 2000  # both turns' calls
    assert ev2.records[0].cost() == pytest.approx(2 * one_run)


async def test_true_spend_counts_the_runs_that_errored(prices):
    prices["slow-model"] = (1.0, 1.0)
    slow = an.Agent("x", [], model=_model("slow-model", 500, 500, delay=0.5))
    fast = an.Agent("x", [], model=_model("slow-model", 500, 500))
    tasks = an.TaskSet([an.Task("t", "hi", history=("earlier turn",))])
    ev = await an.evaluate({"fast": fast, "slow": slow}, tasks, timeout=0.7, progress=False)
    slow_run = ev.record("slow", "t")
    assert slow_run.outcome == "error" and "timed out" in slow_run.error
    assert slow_run.prompt_tokens == 500  # the first turn's call was made and paid for
    s = ev.summary
    assert s.loc["slow", "spend"] == pytest.approx(1000 / 1e6)
    assert s.loc["slow", "spend_completed"] == 0.0  # what a report of finished runs would say
    assert s.loc["fast", "spend"] == s.loc["fast", "spend_completed"] == pytest.approx(2000 / 1e6)


async def test_cache_hits_cost_nothing(prices):
    prices["priced-model"] = (1.0, 1.0)
    agent = an.Agent("x", [], model=_model("priced-model", 100, 100))
    tasks = an.TaskSet([an.Task("a", "hi")])
    cache = an.evals.ResponseCache()
    first = await an.evaluate({"v": agent}, tasks, cache=cache, progress=False)
    again = await an.evaluate({"v": agent}, tasks, cache=cache, progress=False)
    assert first.records[0].cost() == pytest.approx(200 / 1e6)
    assert again.records[0].cached_calls == 1 and again.records[0].cost() == 0.0


async def test_a_reply_without_usage_makes_a_priced_cost_unknown(prices):
    prices["no-usage"] = (1.0, 1.0)
    prices["free-no-usage"] = (0.0, 0.0)

    async def reply(request):
        return ModelResponse(AssistantMessage(content="done"), None)

    tasks = an.TaskSet([an.Task("a", "hi")])
    variants = {
        "priced": an.Agent("x", [], model=FunctionModel(reply, name="no-usage")),
        "free": an.Agent("x", [], model=FunctionModel(reply, name="free-no-usage")),
    }
    ev = await an.evaluate(variants, tasks, progress=False)
    priced, free = ev.record("priced", "a"), ev.record("free", "a")
    assert priced.model_calls == 1 and priced.unmetered == 1 and priced.cost() is None
    assert priced.run.usage.estimated  # its tokens are the runtime's estimate
    assert free.cost() == 0.0


def test_saved_records_keep_their_tokens_and_price_anew(tmp_path, prices):
    record = an.evals.EvalRecord(
        "v", "t", 0, "pass", model="m", prompt_tokens=10, completion_tokens=5
    )
    ev = an.Evaluation.from_records([record])
    assert record.cost() is None
    prices["m"] = (1e5, 1e5)
    assert ev.records[0].cost() == pytest.approx(1.5)
    path = ev.save(tmp_path / "e.jsonl")
    again = an.Evaluation.load(path)
    assert again.records[0].prompt_tokens == 10 and again.summary.loc["v", "spend"] == 1.5


async def test_the_static_table_and_the_matrix_say_unknown_for_an_unset_price(prices):
    agent = an.Agent("x", [], model=_model("mystery-model", 10, 10))
    ev = await an.evaluate({"v": agent}, an.TaskSet([an.Task("a", "hi")]), progress=False)
    html = ev._repr_mimebundle_()["text/html"]
    assert "<td>unknown</td>" in html and "<td>nan</td>" not in html.lower()
    pytest.importorskip("anywidget")
    from agentnb.widgets.evals import summary_rows

    assert summary_rows(ev)[0]["spend"] is None  # the matrix's JS shows null as "unknown"
    prices["mystery-model"] = (0.0, 0.0)
    assert "<td>$0</td>" in ev._repr_mimebundle_()["text/html"]
