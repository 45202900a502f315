"""Tasks and task sets: the fixed requests an evaluation runs, each with its checks.

    task = an.Task("weather-fri", "周五北京天气怎么样？",
                   checks=[an.checks.calls("search_weather", city="北京"), an.checks.grounded()],
                   tags=["dates", "zh"])
    tasks = an.TaskSet([task, ...]);  tasks["weather-fri"];  len(tasks)
    tasks.to_jsonl("tasks.jsonl");  an.TaskSet.from_jsonl("tasks.jsonl")
    tasks.to_frame();  an.TaskSet.from_frame(df)

A task may carry earlier turns (``history``: strings are user turns run first in the same
session, dicts are messages placed in it as they are). Tools with per-run state belong to the
task: ``tools=factory`` is called once per run and returns the run's tools, or ``(tools,
state)`` (:mod:`.hooks`; ``state`` is what :func:`~agentnb.checks.end_state` checks); a
replaying agent wraps them, so the same task runs live and replayed, and they carry the
variant's descriptions of tools of their names, so a description variant reaches the model.
``setup(agent)`` prepares anything else per run (a non-None return value is the state).
Checks and metrics read the last turn, the task's ``input`` (a task with a ``user`` is a
conversation: :mod:`.conversation`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import ConfigurationError
from ..storage import dumps, write_atomically
from .checks.base import Check, FunctionCheck, as_check, check_from_dict, function_record
from .hooks import HOOKS
from .user import User

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Task", "TaskSet"]


class Task(BaseModel):
    """One request to evaluate, with the checks that judge its run.

    ``Task(name, input, checks=[...], tags=[...], metadata={...}, history=[...],
    tools=factory, setup=fn)``; only ``name`` and ``input`` are required.

    Args:
        name: the task's name, unique in its :class:`TaskSet` (rows, pairs and files use it).
        input: the request, the last user turn of the run; checks and metrics read this turn.
        checks: what must hold of the run: checks of :mod:`agentnb.checks` (``calls``,
            ``answer_contains``, ``grounded``, ``end_state``, ``answer_and_state`` ...) or
            plain functions ``fn(result) -> bool | str`` (a string is the reason it failed);
            one check or a list.
        tags: labels to filter by (``task_set(tags=[...])``) and to stratify the optimiser's
            split of training and validation tasks.
        metadata: anything else to keep with the task (saved with it; a check can read it
            as ``evidence.task.metadata``).
        history: earlier turns of the same conversation, run first in the run's session: a
            string is a user turn the agent answers, a dict is a message placed as it is.
        tools: a factory ``tools()`` called once per run that returns the run's own tools
            (they replace the agent's), or ``(tools, state)``: ``state`` is what end-state
            checks read. Use it for tools with per-run state (a calendar, a booking desk), so
            runs never share it; a replaying agent wraps these tools too. They say what the
            variant says: a tool takes the description the variant's agent gives a tool of
            its name (``agent.copy(descriptions=...)``, a Playground edit, an optimiser
            proposal), so the model sees the variant; the function and state stay the task's.
        setup: ``setup(agent)`` called once per run, after ``tools``, with the run's agent (a
            copy: change it freely); a non-None return value is the state end-state checks
            read (else the state ``tools`` returned, else the run's agent).
        user: an :class:`~agentnb.evals.User`: a conversation, ``input`` its first message.

    A task saves to JSONL (:meth:`to_dict`; ``tools`` and ``setup`` by import path or
    source) and reads back with :meth:`from_dict` / :meth:`TaskSet.from_jsonl`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str
    input: str
    checks: tuple[Check, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    history: tuple[str | dict[str, Any], ...] = ()
    setup: Callable[[Any], Any] | None = None
    tools: Callable[[], Any] | None = None
    user: Any = None

    def __init__(self, name: str, input: str, checks: Iterable[Any] = (), **fields: Any) -> None:
        fields["user"] = User.of(fields.get("user"))  # a User, its dict (a file), or None
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
        for hook, what in HOOKS.items():  # setup, tools: each refused as what it is called
            if getattr(self, hook) is not None:
                record[hook] = function_record(getattr(self, hook), what)
        record.update({"user": self.user.to_dict()} if self.user is not None else {})
        return record

    @classmethod
    def from_dict(cls, record: dict[str, Any], *, judge: Any = None, trust: bool = False) -> Task:
        """The task a :meth:`to_dict` dict describes (``judge``: the model of judge checks;
        ``trust``: run the checks saved by source, see :mod:`agentnb.evals.checks.source`)."""
        if not isinstance(record, dict) or "name" not in record or "input" not in record:
            raise ConfigurationError(f"a task needs a name and an input, got {record!r:.200}")
        fields = dict(record)
        checks = fields.pop("checks", None) or []
        if isinstance(checks, str):  # a DataFrame cell written as JSON text
            checks = json.loads(checks)
        fields["checks"] = [check_from_dict(c, judge_model=judge, trust=trust) for c in checks]
        for key in ("tags", "history", "metadata"):
            if isinstance(fields.get(key), str):
                fields[key] = json.loads(fields[key])
        for hook in ("setup", "tools"):
            value = fields.get(hook)
            if value:
                spec = value if isinstance(value, dict) else {"check": "function", "ref": value}
                fields[hook] = check_from_dict(spec, trust=trust).fn  # type: ignore[attr-defined]
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
        cls,
        records: Iterable[dict[str, Any]],
        *,
        name: str = "tasks",
        judge: Any = None,
        trust: bool = False,
        where: Any = None,
        lines: Iterable[int] | None = None,
    ) -> TaskSet:
        """The tasks of these dicts; an error names the task's line (``where:line``) when the
        dicts came from a file."""
        numbers = iter(lines) if lines is not None else None
        tasks = []
        for i, record in enumerate(records):
            number = next(numbers) if numbers is not None else None
            try:
                tasks.append(Task.from_dict(record, judge=judge, trust=trust))
            except (ConfigurationError, ValueError, TypeError, KeyError) as exc:
                at = f"{where}:{number}" if number is not None else f"task {i}"
                raise ConfigurationError(f"{at}: {exc}") from None
        return cls(tasks, name=name)

    def attach(self, checks: dict[str, Callable[..., Any]]) -> TaskSet:
        """The same tasks with function checks replaced by name: re-attach checks that a
        loaded file kept by source without running them (``{"in_english": in_english}``)."""
        unknown = set(checks) - {c.name for t in self.tasks for c in t.checks}
        if unknown:
            raise ConfigurationError(f"no task has a check named {sorted(unknown)}")

        def swap(c: Check) -> Check:
            fn = checks.get(c.name) if isinstance(c, FunctionCheck) else None
            return FunctionCheck(fn) if fn is not None else c

        tasks = [t.model_copy(update={"checks": tuple(swap(c) for c in t.checks)}) for t in self]
        return TaskSet(tasks, name=self.name)

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        """Write one task per line (UTF-8, Chinese kept readable; the one character rule of
        :mod:`agentnb._json`, so any text reads back). Refuses, naming them, checks it cannot
        keep (see :mod:`agentnb.evals.checks.source`)."""
        lines = [dumps(r) for r in self.to_dicts()]
        return write_atomically(Path(path), "\n".join(lines) + "\n")

    @classmethod
    def from_jsonl(
        cls, path: str | os.PathLike[str], *, judge: Any = None, trust: bool = False
    ) -> TaskSet:
        """Read a file written by :meth:`to_jsonl` (``judge``: the model of judge checks;
        ``trust``: run checks kept by source). Errors name the line."""
        path = Path(path)
        records, numbers = [], []
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except ValueError as exc:
                    raise ConfigurationError(f"{path}:{number}: not JSON ({exc})") from None
                numbers.append(number)
        return cls.from_dicts(
            records, name=path.stem, judge=judge, trust=trust, where=path, lines=numbers
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per task; ``checks`` holds the check dicts (a check that cannot be written
        shows as ``{"check": kind, "name": ...}``), so any task set shows."""
        import pandas as pd

        rows = []
        for t in self.tasks:
            row = t.model_dump(exclude={"checks", "setup", "tools", "user"})
            row["user"] = t.user.to_dict() if t.user is not None else None
            row["checks"] = [_shown(c) for c in t.checks]
            for hook in ("setup", "tools"):
                fn = getattr(t, hook)
                if fn is not None:
                    row[hook] = _shown(FunctionCheck(fn))
            rows.append(row)
        return pd.DataFrame.from_records(rows)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, judge: Any = None) -> TaskSet:
        """The tasks of a DataFrame like :meth:`to_frame`'s (list cells may be JSON text)."""
        records = []
        for row in frame.to_dict(orient="records"):
            records.append({str(k): _cell(v) for k, v in row.items()})
        return cls.from_dicts(records, judge=judge)

    def __repr__(self) -> str:
        return f"<TaskSet {self.name!r}: {len(self.tasks)} tasks>"


def _shown(check: Check) -> dict[str, Any]:
    try:
        return check.to_dict()
    except ConfigurationError:
        return {"check": check.kind, "name": check.name}


def _cell(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays from parquet and friends
        return value.tolist()
    if isinstance(value, float) and value != value:  # NaN: an empty cell
        return None
    return value
