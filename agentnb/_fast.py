"""The hot path's tricks, in one place, each beside its plain twin.

agentnb's loop costs a few times a bare ``while`` loop (``make bench``). A handful of its
savings reach into other libraries' internals; they live here, so the modules a learner
reads (``messages.py``, the stages) call plain-named functions and never meet them. Every
trick has a plain twin that does the same job through public APIs only; ``AGENTNB_PLAIN=1``
in the environment (read once, at import) selects the twins, and ``make test`` runs the unit
tier both ways. ``tests/test_fast.py`` checks each pair gives the same results.

=============  =====================================  ===============================
job            trick                                  plain twin
=============  =====================================  ===============================
:func:`built`  a pydantic model from known-valid      ``cls.model_construct(...)``
               fields: its four slots set directly
:func:`dump`   a model's JSON-mode dict straight      ``model.model_dump(...)``
               from its ``__pydantic_serializer__``
:func:`loads`  ``json``'s C scanner, one call         ``json.loads``
:func:`dumps_  ``json``'s C encoder, built once       ``JSONEncoder.encode``
with`
:func:`eager`  a task's first step run in the         a task, awaited (3.12+: its own
               caller, swapping the current task      ``eager_start``: no trick)
:func:`        a shared list grown in place when      a new list each time
extended`      nothing else holds it (refcount)
=============  =====================================  ===============================
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import sys
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["PLAIN", "FirstStep", "built", "dump", "dumps_with", "eager", "extended", "loads"]

#: True when ``AGENTNB_PLAIN=1``: every function below is its plain twin.
PLAIN = os.environ.get("AGENTNB_PLAIN", "").strip() not in ("", "0")

_M = TypeVar("_M", bound=BaseModel)
_L = TypeVar("_L", bound=list[Any])


# -- pydantic: a model from fields known to be valid ---------------------------------------------
def built_plain(cls: type[_M], fields: dict[str, Any], given: set[str]) -> _M:
    """``cls.model_construct``: ``fields`` holds every field, ``given`` names those set."""
    return cls.model_construct(set(given), **fields)


def built_fast(cls: type[_M], fields: dict[str, Any], given: set[str]) -> _M:
    """What ``model_construct`` does without its per-field loop: the object's ``__dict__``,
    fields-set, extras and private slots set directly. ``given`` and the empty extras are
    shared by every object built from them (frozen models never change either in place:
    pydantic refuses the assignment first, and ``model_copy`` copies both), 280 bytes less
    per message a session keeps."""
    obj = object.__new__(cls)
    _set(obj, "__dict__", fields)
    _set(obj, "__pydantic_fields_set__", given)
    _set(obj, "__pydantic_extra__", _EMPTY)
    _set(obj, "__pydantic_private__", None)
    return obj


_set = object.__setattr__
_EMPTY: dict[str, Any] = {}


# -- pydantic: a model's JSON-mode dict ---------------------------------------------------------
def dump_plain(model: BaseModel) -> dict[str, Any]:
    """The fields that were set, by alias, as JSON-ready values."""
    return model.model_dump(mode="json", exclude_unset=True, by_alias=True)


def dump_fast(model: BaseModel) -> dict[str, Any]:
    """``model_dump`` without its Python wrapper: the core serializer, called directly."""
    dumped: dict[str, Any] = model.__pydantic_serializer__.to_python(
        model, mode="json", exclude_unset=True, by_alias=True
    )
    return dumped


# -- json: parse one JSON text ------------------------------------------------------------------
def loads_plain(text: str) -> Any:
    return json.loads(text)


#: The C scanner inside ``json.loads`` (set on every decoder; typeshed does not declare it).
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def loads_fast(text: str) -> Any:
    """``json.loads(text)``: the common case (no leading space, one value) in one C call;
    anything else goes through ``json.loads``, which raises in its own words."""
    try:
        value, end = _SCAN(text, 0)
        if end == len(text):
            return value
    except Exception:  # leading space, or not JSON
        pass
    return json.loads(text)


# -- json: encode with a default, standard JSON only ---------------------------------------------
def dumps_with_plain(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False, default=default)``, as a
    function built once. Raises ``TypeError``/``ValueError`` for what JSON cannot hold."""
    return json.JSONEncoder(ensure_ascii=False, default=default, allow_nan=False).encode


def dumps_with_fast(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """The same, through ``json``'s C encoder built once (``JSONEncoder.encode`` builds one
    per call). No circular check: a cycle raises ``RecursionError`` instead of ``ValueError``.
    """
    make = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
    if make is None:
        return dumps_with_plain(default)
    encode = make(
        None, default, json.encoder.encode_basestring, None, ": ", ", ", False, False, False
    )

    def dumps(value: Any) -> str:
        return "".join(encode(value, 0))

    return dumps


# -- asyncio: a task whose first step runs at once ------------------------------------------------
_T = TypeVar("_T")
#: What a coroutine that ended in its first step produced: (True, value) or (False, error).
FirstStep = tuple[bool, Any]


async def _finished(coro: Coroutine[Any, Any, Any], finish: Callable[[Any], _T]) -> _T:
    return finish(await coro)


def eager_plain(
    coro: Coroutine[Any, Any, Any], finish: Callable[[Any], _T]
) -> tuple[asyncio.Task[_T], FirstStep | None]:
    """A task of ``finish(await coro)``, started on the loop's next turn (no outcome yet)."""
    return asyncio.get_running_loop().create_task(_finished(coro, finish)), None


def eager_builtin(
    coro: Coroutine[Any, Any, Any], finish: Callable[[Any], _T]
) -> tuple[asyncio.Task[_T], FirstStep | None]:
    """Python 3.12's eager start: the task's first step runs now; done, it has an outcome."""
    loop = asyncio.get_running_loop()
    task = asyncio.Task(_finished(coro, finish), loop=loop, eager_start=True)  # type: ignore[call-arg]
    if not task.done():
        return task, None
    if task.cancelled():  # it cancelled itself in its first step
        return task, (False, asyncio.CancelledError())
    error = task.exception()
    return task, (True, task.result()) if error is None else (False, error)


def eager_fast(
    coro: Coroutine[Any, Any, Any], finish: Callable[[Any], _T]
) -> tuple[asyncio.Task[_T], FirstStep | None]:
    """3.12's eager start on 3.11, by hand. The task is made first, so inside the coroutine
    ``asyncio.current_task()`` is its own from the first line (``asyncio.timeout`` and task
    groups work); then its first step runs here, with the task swapped in as the current one
    (asyncio's private ``_enter_task``/``_leave_task``, what 3.12 does inside). A coroutine
    that ends in its first step has its outcome; its task has nothing left to do."""
    from asyncio.tasks import _enter_task, _leave_task

    loop = asyncio.get_running_loop()
    steps = _Steps(coro, finish)
    context = contextvars.copy_context()  # the coroutine's own, as a task's would be
    # Not loop.create_task: a task factory could start it before its first step, ours to run.
    task: asyncio.Task[_T] = asyncio.Task(steps.rest(), loop=loop, context=context)
    caller = asyncio.current_task(loop)
    if caller is not None:
        _leave_task(loop, caller)
    _enter_task(loop, task)
    try:
        context.run(steps.first)
    finally:
        _leave_task(loop, task)
        if caller is not None:
            _enter_task(loop, caller)
    return task, steps.outcome


class _Steps:
    """A coroutine's first step driven by hand; the rest by its task."""

    __slots__ = ("coro", "finish", "outcome", "waiting")

    def __init__(self, coro: Coroutine[Any, Any, Any], finish: Callable[[Any], Any]) -> None:
        self.coro = coro
        self.finish = finish
        self.outcome: FirstStep | None = None  # set when it ended in its first step
        self.waiting: Any = None  # what it suspended on (a future, or None to yield a turn)

    def first(self) -> None:
        try:
            self.waiting = self.coro.send(None)
        except StopIteration as returned:
            self.outcome = (True, self.finish(returned.value))
        except BaseException as exc:  # the coroutine's own failure: the caller raises it
            self.outcome = (False, exc)

    @types.coroutine
    def rest(self) -> Generator[Any, None, Any]:
        """The task's coroutine: hand the task what the coroutine waits on, then go on."""
        if self.outcome is not None:
            return None  # it ended in its first step: the caller has its outcome
        coro, waiting = self.coro, self.waiting
        while True:
            try:
                yield waiting  # the task waits on it exactly as if the coroutine had yielded it
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancelled while waiting: the coroutine decides
                try:
                    waiting = coro.throw(exc)
                except StopIteration as returned:
                    return self.finish(returned.value)
                continue
            return self.finish((yield from coro))


# -- a shared, growing list -----------------------------------------------------------------------
def extended_plain(items: _L, new: list[Any]) -> _L:
    """A new list of the same type: ``items`` then ``new`` (``items`` unchanged)."""
    grown = type(items)(items)
    list.extend(grown, new)
    return grown


def extended_fast(items: _L, new: list[Any]) -> _L:
    """``items`` with ``new`` appended *in place* when nothing but its owner's attribute holds
    it (CPython's reference count: the attribute, this call's argument, ``getrefcount``'s
    own), else a new list, so whoever kept the old one keeps it unchanged."""
    if sys.getrefcount(items) <= 3:
        list.extend(items, new)
        return items
    return extended_plain(items, new)


# -- the selection ------------------------------------------------------------------------------
# Reference counts say who holds an object on the CPython versions this was measured on; 3.14
# borrows references on the stack, so counts may be lower than the holders: the plain twin there.
_COUNTS = sys.implementation.name == "cpython" and sys.version_info < (3, 14)

built = built_plain if PLAIN else built_fast
dump = dump_plain if PLAIN else dump_fast
loads = loads_plain if PLAIN else loads_fast
dumps_with = dumps_with_plain if PLAIN else dumps_with_fast
if sys.version_info >= (3, 12):
    eager = eager_builtin  # the language does it: no trick to switch off
else:
    eager = eager_plain if PLAIN else eager_fast
extended = extended_fast if _COUNTS and not PLAIN else extended_plain
