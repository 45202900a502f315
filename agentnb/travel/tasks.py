"""The travel assistant's evaluation task set: ``an.travel.task_set()``.

39 requests in Chinese and English (``data/travel/tasks.jsonl``, written by hand): the
articles' own requests, relative dates, budgets kept and exceeded, ambiguous requests that
must be asked about rather than guessed, unknown cities, follow-ups that lean on earlier
turns, and comparisons. Each carries declarative checks (the tools it must call, what the
answer must say, ``grounded()``), and tags to select by. The reference date is Monday
2025-01-06, as for every travel tool and the stand-in model.

    tasks = an.travel.task_set()                      # all 39
    an.travel.task_set(tags=["over_budget"])          # a slice
    ev = await an.evaluate({"article": an.travel.travel_agent()}, tasks)
"""

from __future__ import annotations

from collections.abc import Iterable

from ..evals.tasks import TaskSet
from .data import data_dir

__all__ = ["TAGS", "task_set"]

#: The topics a task is tagged with (besides its language, ``zh`` or ``en``).
TAGS = ("article", "dates", "budget", "over_budget", "ambiguous", "unknown_city", "follow_up",
        "compare", "everyday")  # fmt: skip


def task_set(*, tags: Iterable[str] = (), language: str | None = None) -> TaskSet:
    """The travel tasks; ``tags`` keeps those carrying every tag, ``language`` "zh" or "en"."""
    tasks = TaskSet.from_jsonl(data_dir() / "tasks.jsonl")
    need = set(tags) | ({language} if language else set())
    chosen = tasks.select(tags=need) if need else tasks
    return TaskSet(chosen, name="travel")
