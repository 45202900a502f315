"""What binding and checking tools given as JSON schemas costs, measured in one process.

    make bench            # or: python scripts/bench_tools.py [--rounds N]

An evaluation that binds its tools per run (``Task(tools=factory)``, a setup that closes
over the run's backend) makes every tool again for every run, from the same schemas. The
schema's checker is compiled once per distinct schema (keyed by its canonical JSON), so a
bind after the first costs copying the schema and reading the function, not checking the
schema against its meta-schema again.

Figures printed (CPU microseconds, median and interquartile range over paired rounds;
the "cold" bind clears the compiled-schema cache first, which is what every bind cost
before the cache):
  * ``Tool.from_openai`` per tool, warm and cold, for a small travel catalogue (4 tools)
    and a large one (24 tools with nested schemas, as issue 26's multi-turn suite has);
  * validating one call's arguments that fit (what most calls are): the compiled fast check
    (agentnb.tools.accept) against jsonschema alone, which is what every call cost before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import agentnb as an
from agentnb.tools import schema as schema_module

SMALL = [
    {
        "name": "search_flights",
        "description": "Flights between two cities on a date.",
        "parameters": {
            "type": "object",
            "properties": {
                "departure": {"type": "string", "description": "city of departure"},
                "destination": {"type": "string"},
                "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
                "cabin": {"type": "string", "enum": ["economy", "business"]},
            },
            "required": ["departure", "destination", "date"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search_weather",
        "description": "Weather for a city on a date.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
            "required": ["city", "date"],
        },
    },
    {
        "name": "search_hotels",
        "description": "Hotels in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "check_in_date": {"type": "string", "format": "date"},
                "nights": {"type": "integer", "minimum": 1, "maximum": 30},
            },
            "required": ["city", "check_in_date"],
        },
    },
    {
        "name": "book_hotel",
        "description": "Book a hotel room.",
        "parameters": {
            "type": "object",
            "properties": {
                "hotel_id": {"type": "string"},
                "guests": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                        "required": ["name"],
                    },
                },
            },
            "required": ["hotel_id"],
        },
    },
]


def _large(i: int) -> dict[str, Any]:
    """One of 24 tools with a large nested schema of its own (a $defs entry used twice)."""
    address = {
        "type": "object",
        "properties": {f"line{k}": {"type": "string", "maxLength": 80} for k in range(4)}
        | {"country": {"type": "string", "pattern": "^[A-Z]{2}$"}},
        "required": ["line0", "country"],
    }
    props: dict[str, Any] = {f"field_{i}_{k}": {"type": "string"} for k in range(12)}
    props |= {
        "count": {"type": "integer", "minimum": 0},
        "kind": {"type": "string", "enum": [f"k{j}" for j in range(10)]},
        "home": {"$ref": "#/$defs/address"},
        "work": {"$ref": "#/$defs/address"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
    }
    return {
        "name": f"operation_{i}",
        "description": f"Operation number {i} of the catalogue, with many parameters.",
        "parameters": {
            "type": "object",
            "properties": props,
            "required": [f"field_{i}_0", "kind"],
            "$defs": {"address": address},
        },
    }


LARGE = [_large(i) for i in range(24)]
ARGS = {"departure": "上海", "destination": "北京", "date": "2025-01-10"}


def _fn(**kwargs: Any) -> Any:
    return kwargs


def _bind(catalogue: list[dict[str, Any]], cold: bool) -> float:
    """CPU seconds to bind every tool of ``catalogue`` once (a new closure each, as per run)."""
    if cold:
        schema_module._checker.cache_clear()
        schema_module._compiled.cache_clear()
    fns = [(lambda **kw: kw) for _ in catalogue]
    start = time.thread_time()
    for spec, fn in zip(catalogue, fns, strict=True):
        an.Tool.from_openai(spec, fn)
    return time.thread_time() - start


LARGE_ARGS = {f"field_0_{k}": "v" for k in range(12)} | {
    "count": 3,
    "kind": "k1",
    "home": {"line0": "a", "country": "CN"},
    "work": {"line0": "b", "country": "US"},
    "tags": ["a", "b"],
}


def _check(tool: an.Tool, args: dict[str, Any], n: int, alone: bool) -> float:
    """CPU seconds per call: ``tool.validate``, or jsonschema's own walk (``alone``)."""
    slow = tool._check._validator  # type: ignore[union-attr]
    schema_module.DEADLINE.set(time.thread_time() + 60)  # the pattern budget, as validate sets
    start = time.thread_time()
    for _ in range(n):
        if alone:
            assert not any(slow.iter_errors(args))
        else:
            tool.validate(args)
    return (time.thread_time() - start) / n


def _summary(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return f"{statistics.median(values):8.1f} us (IQR {q[0]:.1f}-{q[2]:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=25)
    rounds = parser.parse_args().rounds
    print(f"load average {os.getloadavg()[0]:.2f}; {rounds} paired rounds; CPU time")
    rows: dict[str, list[float]] = {}
    for name, catalogue in (("4 travel tools", SMALL), ("24 large tools", LARGE)):
        _bind(catalogue, cold=False)  # imports and first compiles out of the way
        warm, cold, ratio = [], [], []
        for _ in range(rounds):
            c = _bind(catalogue, cold=True) / len(catalogue) * 1e6
            w = _bind(catalogue, cold=False) / len(catalogue) * 1e6
            cold.append(c)
            warm.append(w)
            ratio.append(c / w)
        rows[name] = warm
        print(f"Tool.from_openai, {name}: warm {_summary(warm)} per tool")
        print(f"{'':>18}cold {_summary(cold)} per tool (compiling the schema)")
        print(f"{'':>18}cold / warm {statistics.median(ratio):.1f}x")
    for name, spec, args in (("search_flights", SMALL[0], ARGS), ("large", LARGE[0], LARGE_ARGS)):
        tool = an.Tool.from_openai(spec, _fn)
        fast, alone, ratio = [], [], []
        for _ in range(rounds):
            f = _check(tool, args, 100, alone=False) * 1e6
            a = _check(tool, args, 100, alone=True) * 1e6
            fast.append(f)
            alone.append(a)
            ratio.append(a / f)
        print(f"validating a call that fits, {name}: {_summary(fast)}")
        print(f"{'':>18}jsonschema alone {_summary(alone)}; {statistics.median(ratio):.1f}x")
    worst = max(statistics.median(v) for v in rows.values())
    print(f"target: a bind <= 100 us per tool (issue 24) -> {'met' if worst <= 100 else 'NOT met'}")


if __name__ == "__main__":
    main()
