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

Each run of an evaluation is metered (:class:`Metered` wraps its model): every model call
that reached the model, in every turn of the task, also in a run that later timed out or
raised; a reply answered by the response cache cost nothing and is not counted. So an
evaluation has two spends: the **true spend** (every run, errors included) and the
**completed-only spend** (runs that finished, pass or fail), which is what a report that
forgets its failed runs would show. The optimiser's proposer is metered the same way and
reported apart.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigurationError
from ..models.base import Delta, ModelRequest, ModelResponse, ReplyAssembler

__all__ = ["PRICES", "Metered", "Price", "PriceTable", "money"]


@dataclass(frozen=True)
class Price:
    """USD per million tokens: ``input`` (prompt) and ``output`` (completion); ``note`` says
    where the figures come from."""

    input: float
    output: float
    note: str = ""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


class PriceTable:
    """Model name (or ``fnmatch`` pattern such as ``"gpt-4o*"``) → :class:`Price`.

    An exact name wins over a pattern; among patterns, the longest (most specific) wins.
    ``table[name] = (input, output)`` or ``table.set(name, input=..., output=...)`` adds or
    replaces an entry; ``del table[name]`` removes one; ``table.frame`` shows them all.
    """

    def __init__(self, entries: dict[str, Price] | None = None) -> None:
        self._entries: dict[str, Price] = dict(entries or {})

    def set(self, name: str, *, input: float, output: float, note: str = "") -> Price:
        """Set the price of ``name`` (a model name or a pattern), USD per million tokens."""
        for what, value in (("input", input), ("output", output)):
            if not isinstance(value, int | float) or math.isnan(value) or value < 0:
                raise ConfigurationError(
                    f"the {what} price of {name!r} must be a number of USD per million tokens "
                    f">= 0, not {value!r}"
                )
        price = self._entries[name] = Price(float(input), float(output), note)
        return price

    def __setitem__(self, name: str, value: Price | tuple[float, float]) -> None:
        if isinstance(value, Price):
            self.set(name, input=value.input, output=value.output, note=value.note)
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


class Metered:
    """``model`` with every call it really makes counted: ``calls``, ``prompt_tokens``,
    ``completion_tokens`` (replies a :class:`~agentnb.evals.CachedModel` answered from its
    cache are left out: they cost nothing) and ``unmetered`` (calls whose reply gave no
    usage: their tokens are unknown, so is their cost unless the price is 0)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.name
        self.streaming = bool(getattr(model, "streaming", False))
        own = getattr(model, "tokenizer", None)
        if own is not None:
            self.tokenizer = own
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.unmetered = 0

    def __getattr__(self, name: str) -> Any:
        # what else the runtime asks of a model (provider, finish_stream...) is the model's own
        if name.startswith("__") or name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    def _count(self, response: ModelResponse | None, hits_before: int) -> None:
        if getattr(self.model, "hits", 0) > hits_before:  # answered from the cache: free
            return
        self.calls += 1
        usage = response.usage if response is not None else None
        if usage is None:
            self.unmetered += 1
            return
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens

    async def complete(self, request: ModelRequest) -> ModelResponse:
        before = getattr(self.model, "hits", 0)
        response: ModelResponse = await self.model.complete(request)
        self._count(response, before)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        before = getattr(self.model, "hits", 0)
        assembler = ReplyAssembler()
        async for delta in self.model.stream(request):
            assembler.add(delta)
            yield delta
        if getattr(self.model, "hits", 0) > before:
            return
        self.calls += 1
        if assembler.usage is None:
            self.unmetered += 1
        else:
            self.prompt_tokens += assembler.usage.prompt_tokens
            self.completion_tokens += assembler.usage.completion_tokens

    def cost(self, prices: PriceTable | None = None) -> float | None:
        """What the counted calls cost at ``prices`` (the table by default); None when the
        price is unknown, or when some call's tokens are (and the price is not 0)."""
        price = (prices or PRICES).lookup(self.name)
        if price is None:
            return None
        if self.unmetered and (price.input or price.output):
            return None
        return price.cost(self.prompt_tokens, self.completion_tokens)

    def __repr__(self) -> str:
        return f"<Metered {self.name!r}: {self.calls} calls>"
