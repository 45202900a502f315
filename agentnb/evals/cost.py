"""Money: a price table, the tokens a run really spent, and what they cost.

    an.evals.prices["gpt-4o-mini"] = (0.15, 0.60)        # USD per million input, output tokens
    an.evals.prices.set("my-model*", input=1.0, output=2.0)   # a pattern: every name it matches
    an.evals.prices.cost("gpt-4o-mini", 1200, 300)        # 0.00036
    an.evals.prices.cost("someone-elses-model", 10, 10)   # None: unknown, never 0

The table ships with the prices agentnb can know: the stand-in ``TravelModel`` (and its
proposer) and the local SmolLM2 (``make local``) cost nothing, since they run in this process
or on this machine, and so does a cassette replayed offline (a model named ``replay:...``).
Provider prices change and differ by contract, so none is shipped: set the ones you pay. A
name no entry matches has an **unknown** price: its cost is ``None`` (NaN in a DataFrame,
"unknown" in text), never 0.

Every run meters itself: its record (``session.runs``) sums the tokens of each model call as
it answers, in every turn of a task, also in a run that later timed out or raised; a reply a
cache gave (``ModelResponse(cached=True)``, :class:`~agentnb.evals.CachedModel`) is counted
apart and never billed. :func:`spent` prices runs by one rule: their billed tokens at their
model's price, **unknown** when the price is, or when a call reported no usage (its tokens are
an estimate) at a price above 0. So an evaluation has two spends: the **true spend** (every
run, errors included) and the **completed-only spend** (runs that finished, pass or fail),
which is what a report that forgets its failed runs would show. The optimiser's proposer runs
are priced the same way and reported apart.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from ..session import RunRecord

__all__ = ["PRICES", "Price", "PriceTable", "money", "spent"]


@dataclass(frozen=True)
class Price:
    """USD per million tokens: ``input`` (prompt) and ``output`` (completion); ``note`` says
    where the figures come from."""

    input: float
    output: float
    note: str = ""
    #: Input tokens read from the prompt cache, written to it, and output tokens spent
    #: reasoning, when the provider prices them apart (None: at ``input`` / ``output``).
    cached_input: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None

    def cost(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        cached: int = 0,
        cache_write: int = 0,
        reasoning: int = 0,
    ) -> float:
        """USD for these tokens (``cached``, ``cache_write`` part of ``prompt_tokens``;
        ``reasoning`` part of ``completion_tokens``), each part at its rate."""
        read = self.input if self.cached_input is None else self.cached_input
        write = self.input if self.cache_write is None else self.cache_write
        thought = self.output if self.reasoning is None else self.reasoning
        plain_in, plain_out = prompt_tokens - cached - cache_write, completion_tokens - reasoning
        spent = plain_in * self.input + cached * read + cache_write * write
        return (spent + plain_out * self.output + reasoning * thought) / 1_000_000


class PriceTable:
    """Model name (or ``fnmatch`` pattern such as ``"gpt-4o*"``) → :class:`Price`.

    An exact name wins over a pattern; among patterns, the longest (most specific) wins.
    ``table[name] = (input, output)`` or ``table.set(name, input=..., output=...)`` adds or
    replaces an entry; ``del table[name]`` removes one; ``table.frame`` shows them all.
    """

    def __init__(self, entries: dict[str, Price] | None = None) -> None:
        self._entries: dict[str, Price] = dict(entries or {})

    def set(
        self,
        name: str,
        *,
        input: float,
        output: float,
        note: str = "",
        cached_input: float | None = None,
        cache_write: float | None = None,
        reasoning: float | None = None,
    ) -> Price:
        """Set the price of ``name`` (a model name or a pattern), USD per million tokens;
        ``cached_input``, ``cache_write`` and ``reasoning`` when the provider prices them apart
        (cache reads are often a tenth of ``input``, Anthropic's cache writes 1.25x)."""
        rates = {"input": input, "output": output, "cached_input": cached_input}
        rates |= {"cache_write": cache_write, "reasoning": reasoning}
        for what, value in rates.items():
            if value is None and what not in ("input", "output"):
                continue
            if not isinstance(value, int | float) or math.isnan(value) or value < 0:
                raise ConfigurationError(
                    f"the {what} price of {name!r} must be a number of USD per million tokens "
                    f">= 0, not {value!r}"
                )
        given = {k: float(v) for k, v in rates.items() if v is not None}
        price = self._entries[name] = Price(**given, note=note)
        return price

    def __setitem__(self, name: str, value: Price | tuple[float, float]) -> None:
        if isinstance(value, Price):
            self.set(
                name,
                input=value.input,
                output=value.output,
                note=value.note,
                cached_input=value.cached_input,
                cache_write=value.cache_write,
                reasoning=value.reasoning,
            )
        else:
            try:
                input, output = value
            except (TypeError, ValueError):
                raise ConfigurationError(
                    f"a price is (input, output) in USD per million tokens, not {value!r}"
                ) from None
            self.set(name, input=input, output=output)

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.lookup(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, model: str | None) -> Price | None:
        """The price of ``model`` (None: unknown)."""
        if not model:
            return None
        exact = self._entries.get(model)
        if exact is not None:
            return exact
        matches = [p for p in self._entries if fnmatch.fnmatchcase(model, p)]
        return self._entries[max(matches, key=len)] if matches else None

    def __getitem__(self, model: str) -> Price:
        price = self.lookup(model)
        if price is None:
            raise KeyError(f"no price for {model!r}: set one with prices[{model!r}] = (in, out)")
        return price

    def cost(self, model: str | None, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What ``model`` charges for these tokens in USD; None when its price is unknown."""
        price = self.lookup(model)
        return None if price is None else price.cost(prompt_tokens, completion_tokens)

    def copy(self) -> PriceTable:
        return PriceTable(self._entries)

    @property
    def frame(self) -> Any:
        import pandas as pd

        rows = [
            {"model": k, "input_per_1m": p.input, "output_per_1m": p.output, "note": p.note}
            for k, p in self._entries.items()
        ]
        return pd.DataFrame(rows, columns=["model", "input_per_1m", "output_per_1m", "note"])

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}: {p.input:g}/{p.output:g}" for k, p in self._entries.items())
        return f"<PriceTable USD per 1M tokens in/out: {shown}>"


#: The one price table evaluations read (``an.evals.prices``): extend it with your prices.
PRICES = PriceTable(
    {
        "TravelModel*": Price(0.0, 0.0, "the deterministic stand-in: runs in this process"),
        "TravelProposer*": Price(0.0, 0.0, "the stand-in's proposer: runs in this process"),
        "smollm2*": Price(0.0, 0.0, "the local SmolLM2 (make local): runs on this machine"),
        "replay:*": Price(0.0, 0.0, "a cassette replayed (agentnb.models.replay): no call leaves"),
    }
)


def money(value: float | None) -> str:
    """A cost for people: ``$0.0123``, ``$0`` or ``unknown`` (None or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    if value == 0:
        return "$0"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def spent(runs: Iterable[RunRecord], prices: PriceTable | None = None) -> float | None:
    """What ``runs`` cost in USD at ``prices`` (``an.evals.prices`` by default): each run's
    billed tokens at its model's price. None when a price is unknown, or when a run has calls
    whose reply gave no usage (their tokens are estimated) at a price above 0: the one rule."""
    table = prices or PRICES
    total = 0.0
    for run in runs:
        price = table.lookup(run.model)
        if price is None or (run.unmetered and (price.input or price.output)):
            return None
        billed = run.billed
        total += price.cost(
            billed.prompt_tokens,
            billed.completion_tokens,
            billed.cached_tokens,
            billed.cache_write_tokens,
            billed.reasoning_tokens,
        )
    return total
