"""Checks kept by their source: a function written in a notebook survives a restart (and
those kept by their import path, ``"module:function"``, read back by :func:`imported`).

A function defined in a notebook cell (module ``__main__``) cannot be imported by another
process, so it is written as its source (``inspect.getsource``: IPython keeps every cell's),
with what it needs from outside:

* the values it closes over (``def longer_than(n): def check(result): ...``), when they are
  plain data (numbers, strings, booleans, None, lists and dicts of them);
* the globals it reads: modules (by name, imported again), plain data, functions importable
  from a module of their own (by path) and other notebook functions (by their source too).

Anything else (a lambda, a closure over an object, a global that is an instance) cannot be
kept faithfully: :func:`by_source` raises, naming the check and the name it cannot keep.

Reading such a check back executes code from a file, so it happens only when asked
(``trust=True``); otherwise the check is a placeholder that fails with the way to re-attach it
(``tasks.attach({name: fn})``, or loading with ``trust=True``).
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

from ...errors import ConfigurationError

__all__ = ["by_source", "from_source", "imported", "plain"]


def plain(value: Any) -> bool:
    """Whether ``value`` is plain data (it round-trips through JSON as it is)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list):
        return all(plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    return False


def _names(code: types.CodeType) -> set[str]:
    """Every global name ``code`` (and the code nested in it) reads."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def _refuse(name: str, why: str) -> ConfigurationError:
    return ConfigurationError(
        f"check {name!r} cannot be saved: {why}. Define it as a function (def) whose closure "
        "and globals are plain data or modules, or put it in a module of your own so it is "
        "saved as 'module:function'"
    )


def by_source(fn: Callable[..., Any], _seen: set[str] | None = None) -> dict[str, Any]:
    """``fn`` as ``{"name", "source", "closure", "globals"}`` (see the module docstring);
    raises ConfigurationError naming what cannot be kept."""
    name = str(getattr(fn, "__name__", type(fn).__name__))
    if not isinstance(fn, types.FunctionType) or name == "<lambda>":
        raise _refuse(name, "it is a lambda or not a plain function")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise _refuse(name, f"its source is not available ({exc})") from None
    seen = (_seen or set()) | {name}
    closure: dict[str, Any] = {}
    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        value = cell.cell_contents
        if not plain(value):
            raise _refuse(name, f"it closes over {var} = {type(value).__name__}, not plain data")
        closure[var] = value
    needed: dict[str, Any] = {}
    for var in sorted(_names(fn.__code__)):
        if var not in fn.__globals__ or var in closure:
            continue  # a builtin, an attribute name, or a name set later
        value = fn.__globals__[var]
        if isinstance(value, types.ModuleType):
            needed[var] = {"module": value.__name__}
        elif plain(value):
            needed[var] = {"value": value}
        elif isinstance(value, types.FunctionType) and value.__module__ != "__main__":
            needed[var] = {"ref": f"{value.__module__}:{value.__qualname__}"}
        elif isinstance(value, types.FunctionType) and var not in seen:
            needed[var] = {"source": by_source(value, seen)}
        elif not (isinstance(value, types.FunctionType) and var in seen):
            raise _refuse(name, f"it uses the global {var} = {type(value).__name__}")
    return {"name": name, "source": source, "closure": closure, "globals": needed}


def _unkept(name: str) -> Callable[..., Any]:
    def unkept(*args: Any) -> Any:
        raise ConfigurationError(
            f"check {name!r} was saved by its source and not run (reading a file runs no "
            "code unless asked): load with trust=True, or re-attach it with "
            f"tasks.attach({{{name!r}: {name}}})"
        )

    unkept.__name__ = unkept.__qualname__ = name
    unkept.unkept = True  # type: ignore[attr-defined]
    return unkept


def from_source(record: dict[str, Any], *, trust: bool) -> Callable[..., Any]:
    """The function :func:`by_source` wrote, or a placeholder unless ``trust`` is True."""
    name = str(record.get("name") or "check")
    if not trust:
        return _unkept(name)
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "agentnb_saved_check"}
    for var, how in (record.get("globals") or {}).items():
        if "module" in how:
            namespace[var] = importlib.import_module(how["module"])
        elif "value" in how:
            namespace[var] = how["value"]
        elif "ref" in how:
            namespace[var] = imported(how["ref"])
        else:
            namespace[var] = from_source(how["source"], trust=True)
    code = record["source"]
    closure = record.get("closure") or {}
    if closure:  # rebuild the cells: the function inside a factory taking its free variables
        body = textwrap.indent(code, "    ")
        code = f"def __agentnb_factory({', '.join(closure)}):\n{body}\n    return {name}\n"
    exec(compile(code, f"<saved check {name}>", "exec"), namespace)
    fn = namespace["__agentnb_factory"](**closure) if closure else namespace[name]
    if not callable(fn):
        raise ConfigurationError(f"saved check {name!r} does not define a function {name}")
    return fn  # type: ignore[no-any-return]


def imported(ref: str) -> Callable[..., Any]:
    """The Python function a ``"module:qualname"`` path names, imported. Refused (a
    ConfigurationError, nothing imported): a module of the standard library, and anything
    that is not a function written in Python (``sys:exit``, ``os:system``, a class)."""
    module, _, qualname = ref.partition(":")
    top = module.split(".")[0]
    if not module or not qualname or top in sys.stdlib_module_names or top == "builtins":
        raise ConfigurationError(
            f"check {ref!r} is not loaded: a check is a function of your own module "
            "(module:function), never one of the standard library"
        )
    try:
        target: Any = importlib.import_module(module)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError, ValueError) as exc:
        why = f"check {ref!r} cannot be imported: {exc}"
        if module == "__main__":
            why += " (a function of a notebook or script: save it again, it is kept by source)"
        raise ConfigurationError(why) from None
    if not isinstance(target, types.FunctionType):
        raise ConfigurationError(
            f"check {ref!r} is not loaded: it names a {type(target).__name__}, not a function"
        )
    return target
