"""Checks kept by their source: a function written in a notebook survives a restart (those
kept by their import path, ``"module:function"``, are read back by :mod:`.refs`).

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
(``tasks.attach({name: fn})``, or loading with ``trust=True``). A function is loaded under the
name its ``def`` binds, whatever ``__name__`` says (``check.__name__ = f"booked_{room}"`` in a
factory), and keeps its ``__name__``; one that cannot be loaded (it raises while defined, a
module it needs is missing) is a placeholder that fails its own check, not the file.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import textwrap
import types
from collections.abc import Callable
from functools import partial
from typing import Any

from ...errors import ConfigurationError
from .refs import imported, placeholder

__all__ = ["by_source", "from_source", "plain"]


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


def _refuse(name: str, why: str, what: str = "check") -> ConfigurationError:
    return ConfigurationError(
        f"{what} {name!r} cannot be saved: {why}. Define it as a function (def) whose closure "
        "and globals are plain data or modules, or put it in a module of your own so it is "
        "saved as 'module:function'"
    )


def by_source(
    fn: Callable[..., Any], _seen: set[str] | None = None, *, what: str = "check"
) -> dict[str, Any]:
    """``fn`` as ``{"name", "source", "closure", "globals"}`` (see the module docstring);
    raises ConfigurationError naming what cannot be kept (as a ``what``: a check, a tools
    factory, a setup function)."""
    name = str(getattr(fn, "__name__", type(fn).__name__))
    refuse = partial(_refuse, what=what)
    if not isinstance(fn, types.FunctionType) or name == "<lambda>":
        raise refuse(name, "it is a lambda or not a plain function")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise refuse(name, f"its source is not available ({exc})") from None
    seen = (_seen or set()) | {name, fn.__code__.co_name}
    closure: dict[str, Any] = {}
    for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        value = cell.cell_contents
        if not plain(value):
            raise refuse(name, f"it closes over {var} = {type(value).__name__}, not plain data")
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
            raise refuse(name, f"it uses the global {var} = {type(value).__name__}")
    return {"name": name, "source": source, "closure": closure, "globals": needed}


def _unkept(name: str, record: dict[str, Any]) -> Callable[..., Any]:
    return placeholder(
        name,
        f"check {name!r} was saved by its source and not run (reading a file runs no "
        "code unless asked): load with trust=True, or re-attach it with "
        f"tasks.attach({{{name!r}: {name}}})",
        {"check": "function", **record},
    )


def _binds(code: str, name: str) -> str:
    """The name the source's ``def`` binds (``__name__`` may have been set by hand)."""
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node.name
    return name


def from_source(record: dict[str, Any], *, trust: bool) -> Callable[..., Any]:
    """The function :func:`by_source` wrote, or a placeholder unless ``trust`` is True (or
    when it cannot be loaded: the placeholder says why, and fails its own check)."""
    name = str(record.get("name") or "check")
    if not trust:
        return _unkept(name, record)
    try:
        return _load(record, name)
    except Exception as exc:  # this check fails, saying why; the file still loads
        why = f"saved check {name!r} could not be loaded: {type(exc).__name__}: {exc}"
        return placeholder(name, why, {"check": "function", **record})


def _load(record: dict[str, Any], name: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "agentnb_saved_check"}
    for var, how in (record.get("globals") or {}).items():
        if "module" in how:
            namespace[var] = importlib.import_module(how["module"])
        elif "value" in how:
            namespace[var] = how["value"]
        elif "ref" in how:
            namespace[var] = imported(how["ref"], trust=True)
        else:
            namespace[var] = from_source(how["source"], trust=True)
    code = record["source"]
    binds = _binds(code, name)
    closure = record.get("closure") or {}
    if closure:  # rebuild the cells: the function inside a factory taking its free variables
        body = textwrap.indent(code, "    ")
        code = f"def __agentnb_factory({', '.join(closure)}):\n{body}\n    return {binds}\n"
    exec(compile(code, f"<saved check {name}>", "exec"), namespace)
    fn = namespace["__agentnb_factory"](**closure) if closure else namespace.get(binds)
    if not callable(fn):
        raise ConfigurationError(f"saved check {name!r} does not define a function {binds}")
    fn.__name__ = name  # what results call it, as when it was saved
    return fn  # type: ignore[no-any-return]
