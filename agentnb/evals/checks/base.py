"""What a check is: a named question about one run, answered with a reason.

A check is a declarative object (``an.checks.calls("search_weather", city="北京")``) or a
plain callable ``fn(result) -> bool | str``. Declarative checks write themselves to JSONL
as ``{"check": name, **arguments}``. A callable is written as its import path
(``"module:function"``) when it can be imported back; a function defined in a notebook (or a
closure) is written **by its source** (:mod:`.source`), with the values it closes over and
the modules it uses, when those are plain data. A check that can be kept neither way (a
lambda, a closure over an object) makes the write refuse, naming it. Reading a file imports
and runs nothing it names unless asked (``trust=True``): a source check is kept as a
placeholder that says how to re-attach it, and an import path is resolved only in a module
already imported (its attribute read statically: no module ``__getattr__`` runs), else it is
such a placeholder too (naming the module to import first). An import path must name a
Python function outside the standard library (``sys:exit`` is refused, also with trust).
A placeholder fails its own check when run (the run is an ``error`` naming it); the rest of
the file loads.
Each check gives a :class:`CheckResult` ``(name, passed, reason)``, recorded per run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from ...errors import ConfigurationError
from ...runtime import bounded, in_thread
from ..batches import PairedCall, batches
from .refs import claim, imported, not_imported, placeholder
from .source import by_source, from_source

if TYPE_CHECKING:
    from ...runtime import RunResult

__all__ = [
    "Check",
    "CheckResult",
    "Evidence",
    "FunctionCheck",
    "as_check",
    "check_from_dict",
    "function_record",
    "imported",
    "run_check",
    "strings",
]


class CheckResult(NamedTuple):
    """One check's outcome for one run: its name, whether it passed, and why."""

    name: str
    passed: bool
    reason: str = ""


@dataclass
class Evidence:
    """What a check reads: the run's result, its trajectory, the tools' state after the run.

    ``state`` is what the task's ``setup(agent)`` returned (the run's agent when it returned
    None or there is no setup); ``task`` is the :class:`~agentnb.evals.Task`;
    ``conversation`` the whole conversation of a task with a user (:class:`~agentnb.evals.
    turns.Turns`: what ``over="conversation"`` reads), else None.
    """

    result: RunResult
    state: Any = None
    task: Any = None
    conversation: Any = None

    def over_conversation(self) -> Evidence:
        """The same evidence read over the whole conversation: its messages, last answer and
        stop reason (every turn of the session for a task without a user)."""
        scope = self.conversation
        if scope is None:
            from ..turns import Turns

            session = self.result.session
            runs = [r for r in session.runs if r.start is not None] or [self.result.record]
            scope = Turns(session, runs, [], None)
        return Evidence(scope, self.state, self.task, self.conversation)

    @cached_property
    def batches(self) -> list[list[PairedCall]]:
        """The run's tool calls, one list per reply (see :mod:`agentnb.evals.batches`)."""
        return batches(self.result.messages)

    @property
    def calls(self) -> list[PairedCall]:
        return [c for batch in self.batches for c in batch]

    @property
    def output(self) -> str:
        return self.result.output or ""


class Check:
    """Base of the declarative checks: a frozen dataclass with a ``kind`` and ``judge()``."""

    kind: ClassVar[str] = ""
    registry: ClassVar[dict[str, type[Check]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        claim(Check.registry, cls)

    def judge(self, evidence: Evidence) -> tuple[bool, str] | Any:
        """``(passed, reason)`` for one run (a coroutine for checks that call a model)."""
        raise NotImplementedError

    def fields(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @property
    def name(self) -> str:
        """How results name this check: ``calls(search_weather, city='北京')``."""
        defaults = {f.name: f.default for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        shown = [
            _show(v)
            for k, v in self.fields().items()
            if v not in (None, {}, (), "") and v != defaults.get(k)
        ]
        return f"{self.kind}({', '.join(shown)})"

    def to_dict(self) -> dict[str, Any]:
        """``{"check": kind, **arguments}``: a JSON object :func:`check_from_dict` reads."""
        return {"check": self.kind, **self.fields()}

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Check:
        return cls(**fields)

    def __repr__(self) -> str:
        return self.name


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v!r}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_show(v) if isinstance(v, Check) else repr(v) for v in value) + "]"
    return value.name if isinstance(value, Check) else repr(value)


@dataclass(frozen=True, repr=False)
class FunctionCheck(Check):
    """A plain callable ``fn(result) -> bool | str`` used as a check.

    ``True`` passes, ``False`` fails; a string is the reason it failed (``""`` passes); a
    ``(bool, reason)`` pair is taken as it is. Coroutine functions are awaited.
    """

    kind: ClassVar[str] = "function"
    fn: Callable[..., Any]

    @property
    def name(self) -> str:
        return str(getattr(self.fn, "__name__", None) or type(self.fn).__name__)

    @property
    def ref(self) -> str | None:
        """``module:qualname`` when the function can be imported back, else None."""
        module, qualname = (
            getattr(self.fn, "__module__", None),
            getattr(self.fn, "__qualname__", ""),
        )
        if not module or not qualname or "<" in qualname:
            return None
        return f"{module}:{qualname}"

    def to_dict(self) -> dict[str, Any]:
        return function_record(self.fn)

    async def judge(self, evidence: Evidence) -> tuple[bool, str]:
        return verdict(await call_off_loop(self.fn, evidence.result))


def function_record(fn: Callable[..., Any], what: str = "check") -> dict[str, Any]:
    """How a function is written to a file: its import path when it can be imported back,
    else by its source (:mod:`.source`; refused naming it as ``what``: a check, a tools
    factory, a setup function); a placeholder writes back what its file said."""
    saved = getattr(fn, "saved", None)
    if saved:  # a check a file named and that was not loaded: written back as it came
        return dict(saved)
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if module and qualname and "<" not in qualname and module != "__main__":
        return {"check": FunctionCheck.kind, "ref": f"{module}:{qualname}"}
    return {"check": FunctionCheck.kind, **by_source(fn, what=what)}


def verdict(value: Any) -> tuple[bool, str]:
    """A callable's return value as ``(passed, reason)``."""
    if isinstance(value, tuple) and len(value) == 2:
        return bool(value[0]), str(value[1])
    if isinstance(value, str):
        return (not value), value
    if isinstance(value, bool):
        return value, "" if value else "returned False"
    return False, f"returned {value!r} (a check returns True, False or a reason string)"


def as_check(value: Any) -> Check:
    """A :class:`Check` from a check, a callable or a JSONL record."""
    if isinstance(value, Check):
        return value
    if isinstance(value, dict):
        return check_from_dict(value)
    if callable(value):
        return FunctionCheck(value)
    raise ConfigurationError(
        f"{value!r} is not a check: use one of an.checks (calls, answer_contains, ...) or a "
        "function fn(result) -> bool | str"
    )


def check_from_dict(
    record: dict[str, Any], *, judge_model: Any = None, trust: bool = False
) -> Check:
    """Rebuild a check written by :meth:`Check.to_dict` (a judge gets ``judge_model``; a
    check kept by source runs only with ``trust=True``, else it is a placeholder)."""
    kind = record.get("check")
    if kind == "function":
        if "source" in record:
            return FunctionCheck(from_source(record, trust=trust))
        ref = str(record.get("ref", ""))
        why = not_imported(ref, trust=trust)
        if why:  # the check fails when run, saying why; the file loads
            name = ref.rpartition(":")[2].rpartition(".")[2]
            return FunctionCheck(placeholder(name, why, {"check": "function", "ref": ref}))
        return FunctionCheck(imported(ref, trust=trust))
    cls = Check.registry.get(str(kind))
    if cls is None:
        known = ", ".join(sorted(Check.registry))
        raise ConfigurationError(f"unknown check {kind!r} in {record!r}; known: {known}")
    args = {k: v for k, v in record.items() if k != "check"}
    if kind == "judge":
        args["model"] = judge_model
    if kind == "over":  # a check read over the whole conversation
        return cls(check_from_dict(args["inner"], judge_model=judge_model, trust=trust))  # type: ignore[call-arg]
    if kind in (
        "end_state",
        "answer_and_state",
        "goal_reached",
    ):  # a function, kept by path or by source
        return cls.from_fields(args, trust=trust)  # type: ignore[call-arg]
    return cls.from_fields(args)


async def call_off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, awaited when it is a coroutine function, else in a worker thread (a
    user's check may block: the event loop, the live matrix and Stop stay free)."""
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    value = await in_thread(partial(fn, *args), _same)
    return await value if inspect.isawaitable(value) else value


def _same(value: Any) -> Any:
    return value


async def run_check(check: Check, evidence: Evidence, timeout: float | None = None) -> CheckResult:
    """Ask ``check`` about one run, within ``timeout`` seconds (a check or a judge that never
    returns raises ``TimeoutError`` and is left to finish alone). A check that raises is not a
    failure: the exception propagates, and the evaluation counts the run as an ``error``."""
    value = check.judge(evidence)
    if inspect.isawaitable(value):
        value = await bounded(asyncio.ensure_future(value), timeout)
    passed, reason = value
    return CheckResult(check.name, bool(passed), str(reason))


def strings(check: str, values: tuple[Any, ...]) -> tuple[str, ...]:
    """A check's texts as given: each a string, or a list of them (``stops_with(["a", "b"])``,
    the spelling the task files use); anything else refused when the check is made, not in
    every run."""
    flat: list[Any] = []
    for value in values:
        flat.extend(value if isinstance(value, list | tuple) else [value])
    wrong = [v for v in flat if not isinstance(v, str)]
    if wrong:
        raise ConfigurationError(f"{check} takes strings (or lists of them), not {wrong[0]!r}")
    if not flat:
        raise ConfigurationError(f"{check} needs at least one text")
    return tuple(flat)
