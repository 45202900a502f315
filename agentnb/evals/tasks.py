"""Tasks and task sets: the fixed requests an evaluation runs, each with its checks.

    task = an.Task("weather-fri", "周五北京天气怎么样？",
                   checks=[an.checks.calls("search_weather", city="北京"), an.checks.grounded()],
                   tags=["dates", "zh"])
    tasks = an.TaskSet([task, ...]);  tasks["weather-fri"];  len(tasks)
    tasks.to_jsonl("tasks.jsonl");  an.TaskSet.from_jsonl("tasks.jsonl")
    tasks.to_frame();  an.TaskSet.from_frame(df)

A task may carry earlier turns (``history``: strings are user turns run first in the same
session, dicts are messages placed in it as they are). Tools with per-run state belong to the
task: ``tools=factory`` is called once per run and returns the run's tools, or
``(tools, state)`` (``state`` is what :func:`~agentnb.checks.end_state` checks); a replaying
agent wraps them, so the same task runs live and replayed. ``setup(agent)`` prepares anything
else per run (a non-None return value is the state). Checks and metrics read the last turn,
the task's ``input``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import ConfigurationError
from .checks.base import Check, FunctionCheck, as_check, check_from_dict

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Task", "TaskSet"]


class Task(BaseModel):
    """One request to evaluate: ``Task(name, input, checks=[...], tags=[], metadata={})``."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str
    input: str
    checks: tuple[Check, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    history: tuple[str | dict[str, Any], ...] = ()
    setup: Callable[[Any], Any] | None = None
    tools: Callable[[], Any] | None = None

    def __init__(self, name: str, input: str, checks: Iterable[Any] = (), **fields: Any) -> None:
        super().__init__(name=name, input=input, checks=checks, **fields)

    @field_validator("checks", mode="before")
    @classmethod
    def _checks(cls, value: Any) -> tuple[Check, ...]:
        if isinstance(value, Check) or callable(value) or isinstance(value, dict):
            value = [value]
        return tuple(as_check(v) for v in value or ())

    @field_validator("history", "tags", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return () if value is None else value

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (checks as ``{"check": ...}`` records; ``setup`` as its path)."""
        record: dict[str, Any] = {
            "name": self.name,
            "input": self.input,
            "checks": [c.to_dict() for c in self.checks],
            "tags": list(self.tags),
            "metadata": self.metadata,
            "history": list(self.history),
        }
        for hook in ("setup", "tools"):
            fn = getattr(self, hook)
            if fn is not None:
                record[hook] = FunctionCheck(fn).to_dict()["ref"]
        return record

    @classmethod
    def from_dict(cls, record: dict[str, Any], *, judge: Any = None) -> Task:
        """The task a :meth:`to_dict` dict describes (``judge``: the model of judge checks)."""
        fields = dict(record)
        checks = fields.pop("checks", None) or []
        if isinstance(checks, str):  # a DataFrame cell written as JSON text
            checks = json.loads(checks)
        fields["checks"] = [check_from_dict(c, judge_model=judge) for c in checks]
        for key in ("tags", "history", "metadata"):
            if isinstance(fields.get(key), str):
                fields[key] = json.loads(fields[key])
        for hook in ("setup", "tools"):
            if fields.get(hook):
                ref = check_from_dict({"check": "function", "ref": fields[hook]})
                fields[hook] = ref.fn  # type: ignore[attr-defined]
            else:
                fields.pop(hook, None)
        return cls(fields.pop("name"), fields.pop("input"), **fields)

    def __repr__(self) -> str:
        return f"<Task {self.name!r}: {self.input[:40]!r}, {len(self.checks)} checks>"


class TaskSet(BaseModel):
    """Tasks by name, in order: iterate, ``len``, ``tasks[name]`` (or ``tasks[i]``)."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[Task, ...] = ()
    name: str = "tasks"

    def __init__(self, tasks: Iterable[Task] = (), **fields: Any) -> None:
        super().__init__(tasks=tuple(tasks), **fields)

    @model_validator(mode="after")
    def _unique(self) -> TaskSet:
        seen: set[str] = set()
        for t in self.tasks:
            if t.name in seen:
                raise ValueError(f"two tasks are named {t.name!r}; task names must be unique")
            seen.add(t.name)
        return self

    def __iter__(self) -> Iterator[Task]:  # type: ignore[override]
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def __getitem__(self, key: str | int) -> Task:
        if isinstance(key, int):
            return self.tasks[key]
        for t in self.tasks:
            if t.name == key:
                return t
        raise KeyError(f"no task named {key!r} (tasks: {', '.join(self.names[:8])} ...)")

    def __contains__(self, key: object) -> bool:
        return any(t.name == key for t in self.tasks)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tasks]

    def select(self, names: Iterable[str] | None = None, *, tags: Iterable[str] = ()) -> TaskSet:
        """The tasks named in ``names`` (in this set's order) and/or carrying every tag."""
        wanted, need = (set(names) if names is not None else None), set(tags)
        chosen = [
            t for t in self.tasks if (wanted is None or t.name in wanted) and need <= set(t.tags)
        ]
        return TaskSet(chosen, name=self.name)

    # -- records, JSONL, DataFrames ---------------------------------------------------------
    def to_dicts(self) -> list[dict[str, Any]]:
        return [t.to_dict() for t in self.tasks]

    @classmethod
    def from_dicts(
        cls, records: Iterable[dict[str, Any]], *, name: str = "tasks", judge: Any = None
    ) -> TaskSet:
        return cls([Task.from_dict(r, judge=judge) for r in records], name=name)

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        """Write one task per line (UTF-8, Chinese kept readable)."""
        path = Path(path)
        lines = [json.dumps(r, ensure_ascii=False) for r in self.to_dicts()]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str], *, judge: Any = None) -> TaskSet:
        """Read a file written by :meth:`to_jsonl` (``judge``: the model of judge checks)."""
        path = Path(path)
        records = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except ValueError as exc:
                    raise ConfigurationError(f"{path}:{number}: not JSON ({exc})") from None
        return cls.from_dicts(records, name=path.stem, judge=judge)

    def to_frame(self) -> pd.DataFrame:
        """One row per task; ``checks`` holds the check records (lists of dicts)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.to_dicts())

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, judge: Any = None) -> TaskSet:
        """The tasks of a DataFrame like :meth:`to_frame`'s (list cells may be JSON text)."""
        records = []
        for row in frame.to_dict(orient="records"):
            records.append({str(k): _cell(v) for k, v in row.items()})
        return cls.from_dicts(records, judge=judge)

    def __repr__(self) -> str:
        return f"<TaskSet {self.name!r}: {len(self.tasks)} tasks>"


def _cell(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays from parquet and friends
        return value.tolist()
    if isinstance(value, float) and value != value:  # NaN: an empty cell
        return None
    return value
