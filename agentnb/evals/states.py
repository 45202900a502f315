"""End states as files keep them, and an end state a check may not read.

An end state is what a task's tools left (``Task(tools=factory)`` returns it with them) and
what :func:`~agentnb.checks.end_state` checks read. Files keep it as JSON when JSON keeps it
**exactly**: dicts with text keys, lists, text, numbers, booleans and None, each of exactly
that type (a tuple would read back as a list, a set or an object not at all). Any other
state is not kept, and the file says so with the reason; reading it back gives a
:class:`Refused` naming it, never another value in its place (DESIGN invariant 10).

A :class:`Refused` state stands for a state a check may not read: one a file could not keep,
or a replay's that did not reproduce its recording (invariant 9). The evaluation refuses an
end-state check on it (``outcome="error"``, the reason given); any other check that reads
it raises :class:`~agentnb.errors.ConfigurationError` with the reason.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ..errors import ConfigurationError

__all__ = ["Refused", "dump_state", "is_state", "load_state", "unkept"]

_PLAIN = (str, int, float, bool, type(None))


class Refused:
    """An end state no check may read, and why (``reason``): any use raises, naming it."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def _refuse(self, *_: Any, **__: Any) -> NoReturn:
        raise ConfigurationError(f"this run's end state cannot be read: {self.reason}")

    def __getattr__(self, name: str) -> Any:  # only names it does not have
        if name.startswith("__") or name == "reason":
            raise AttributeError(name)
        self._refuse()

    __getitem__ = __iter__ = __len__ = __contains__ = __bool__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = None  # type: ignore[assignment]

    def __copy__(self) -> Refused:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Refused:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return Refused, (self.reason,)

    def __repr__(self) -> str:
        return f"<Refused end state: {self.reason}>"


def unkept(state: Any) -> str:
    """Why a file cannot keep ``state`` exactly as JSON ("" when it can)."""
    stack, seen = [state], set()
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _PLAIN:
            if kind is float and value != value:
                return "it holds NaN, which JSON does not keep"
            continue
        if id(value) in seen:
            return "it holds a container twice (JSON would copy it, or never end)"
        seen.add(id(value))
        if kind is list:
            stack.extend(value)
        elif kind is dict:
            keys = [k for k in value if type(k) is not str]
            if keys:
                return f"a dict key {keys[0]!r} is not text (JSON keys are)"
            stack.extend(value.values())
        else:
            return f"a {kind.__name__} is not JSON data (a file keeps dicts, lists and values)"
    return ""


def dump_state(state: Any) -> dict[str, Any]:
    """What a file keeps of ``state``: ``{"state": state}``, or ``{"unsaved": why}``."""
    if isinstance(state, Refused):
        return {"unsaved": state.reason}
    why = unkept(state)
    return {"unsaved": f"its end state was not saved: {why}"} if why else {"state": state}


def load_state(data: dict[str, Any]) -> Any:
    """The state :func:`dump_state` wrote, or a :class:`Refused` saying why it was not kept."""
    if "state" in data:
        return data["state"]
    return Refused(str(data.get("unsaved") or "its end state was not saved"))


def is_state(value: Any) -> bool:
    """Whether ``value`` is an end state a task gave: not None, and not the run's agent (what
    checks read when a task has neither tools nor a setup giving one)."""
    if isinstance(value, Refused):
        return True
    return value is not None and not (hasattr(value, "tools") and hasattr(value, "instructions"))
