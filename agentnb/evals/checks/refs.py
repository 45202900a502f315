"""What a saved check names: an import path, resolved without importing unless trusted, and
a placeholder for a check a file named but that was not loaded.

Reading a file imports and runs nothing it names unless asked (``trust=True``): an import
path is resolved only in a module already imported, its name read statically (no module
``__getattr__`` runs); else the check is a :func:`placeholder` that fails its own check when
run, saying why (naming the module to import first), and the rest of the file loads. An
import path into the standard library, or to anything but a Python function, is refused.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any

from ...errors import ConfigurationError

__all__ = ["claim", "imported", "not_imported", "placeholder"]

STDLIB = sys.stdlib_module_names | {"builtins"}


def imported(ref: str, *, trust: bool = False) -> Callable[..., Any]:
    """The Python function a ``"module:qualname"`` path names. Refused (a ConfigurationError,
    nothing imported): a module of the standard library, and anything that is not a function
    written in Python (``sys:exit``, ``os:system``, a class). Without ``trust`` nothing is
    imported or called: the module must be imported already (:func:`not_imported` says so
    else), and the name is read statically (a module's ``__getattr__`` never runs)."""
    module, _, qualname = ref.partition(":")
    if not module or not qualname or module.split(".")[0] in STDLIB:
        raise ConfigurationError(
            f"check {ref!r} is not loaded: a check is a function of your own module "
            "(module:function), never one of the standard library"
        )
    try:
        if trust:
            target: Any = importlib.import_module(module)
        elif module in sys.modules:
            target = sys.modules[module]
        else:
            raise ConfigurationError(not_imported(ref, trust=False))
        for part in qualname.split("."):
            target = getattr(target, part) if trust else inspect.getattr_static(target, part)
        if isinstance(target, staticmethod):
            target = target.__func__
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


def not_imported(ref: str, *, trust: bool) -> str:
    """Why the function ``ref`` is not loaded from a file read without ``trust``: its module
    is not imported, and reading a file imports nothing unless asked; "" when it may be."""
    module = ref.partition(":")[0]
    if trust or not module or module in sys.modules or module.split(".")[0] in STDLIB:
        return ""
    return (
        f"check {ref!r} was not loaded: its module {module!r} is not imported, and reading "
        f"a file imports nothing unless asked. Import {module} before loading, load with "
        "trust=True, or re-attach the function with tasks.attach({name: fn})"
    )


def placeholder(name: str, why: str, record: dict[str, Any] | None = None) -> Callable[..., Any]:
    """A function named ``name`` standing for a check (or a hook) a file named but that was
    not loaded: calling it raises ``why``, so that check (that run) fails, not the file.
    Saved again, it writes ``record`` (what the file said) back as it was."""

    def unloaded(*args: Any, **kwargs: Any) -> Any:
        raise ConfigurationError(why)

    unloaded.__name__ = unloaded.__qualname__ = name
    unloaded.unkept = True  # type: ignore[attr-defined]
    unloaded.saved = dict(record or {})  # type: ignore[attr-defined]
    return unloaded


def _where(cls: type | None) -> str:
    return f"{cls.__module__}.{cls.__qualname__}" if cls else "no class"


def claim(registry: dict[str, Any], cls: type) -> None:
    """Register a check class that names its own ``kind`` (what a file's ``{"check": kind}``
    loads); a kind another class holds is refused (the same class defined again, as a notebook
    cell run twice, replaces it). A subclass inheriting its kind is not registered, and saving
    it is refused: a file would read it back as the class that names the kind."""
    kind = cls.__dict__.get("kind")
    if not kind:
        if getattr(cls, "kind", ""):
            cls.to_dict = _unsaveable  # type: ignore[attr-defined]
        return
    held = registry.get(kind)
    if held is not None and _where(held) != _where(cls):
        raise ConfigurationError(
            f"check kind {kind!r} is {_where(held)}'s: give {cls.__qualname__} a kind of its own"
        )
    registry[kind] = cls


def _unsaveable(check: Any) -> dict[str, Any]:
    raise ConfigurationError(
        f"{type(check).__qualname__} cannot be saved: its kind {check.kind!r} is its parent's, "
        "and a file would read it back as that; give it a kind of its own"
    )
