"""The sweep the service's sweep tests run: two variants, 30 tasks, seeded outcomes.

The workers load it by name (``--variants tests.service.sweep_app:make_variants --tasks
tests.service.sweep_app:TASKS``), the test in process too, so both run the same sweep. A
variant's model answers ``ok`` for some seeds and ``no`` for others (its ``bias``), so the
summary depends on every run's seed: a sweep on the workers equals one in process only when
each run had its own seed and was counted once. Each answer takes ``AGENTNB_SWEEP_SECONDS``
and is two lines in ``AGENTNB_SWEEP_LOG`` (begin, end, with the process id): the runs made,
and the ones a kill cut short.
"""

from __future__ import annotations

import asyncio
import os

import agentnb as an
from agentnb import checks
from agentnb.models import Model, ModelRequest, ModelResponse

TASKS = an.TaskSet(
    [
        an.Task(f"t{i:02d}", f"question {i}", checks=[checks.answer_contains("ok")])
        for i in range(30)
    ]
)


def _note(what: str, name: str, seed: int | None) -> None:
    log = os.environ.get("AGENTNB_SWEEP_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{what} {name} {seed} {os.getpid()}\n")


class Coin(Model):
    """Answers ``ok`` when ``seed % 100 < bias``."""

    def __init__(self, bias: int, seed: int | None = None) -> None:
        self.name, self.bias, self.seed = f"coin-{bias}", bias, seed

    def with_seed(self, seed: int) -> Coin:
        return Coin(self.bias, seed)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        _note("begin", self.name, self.seed)
        await asyncio.sleep(float(os.environ.get("AGENTNB_SWEEP_SECONDS", "0")))
        _note("end", self.name, self.seed)
        text = "ok" if (self.seed or 0) % 100 < self.bias else "no"
        return ModelResponse(an.AssistantMessage(content=text))


def make_variants() -> dict[str, an.Agent]:
    return {"steady": an.Agent(model=Coin(80)), "shaky": an.Agent(model=Coin(50))}


def make_agent() -> an.Agent:
    return make_variants()["steady"]
