"""The hot path's tricks (agentnb/_fast.py): each does what its plain twin does, and they live
nowhere else. ``AGENTNB_PLAIN=1`` selects the twins (``make test`` runs the unit tier's
runtime, message, tool, model, session, storage and context tests both ways)."""

from __future__ import annotations

import ast
import asyncio
import contextvars
import json
import math
import subprocess
import sys
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentnb import _fast
from agentnb.messages import AssistantMessage, FunctionCall, ToolCall, UserMessage
from tests.test_boundaries import SOURCES

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def test_plain_is_read_from_the_environment_once():
    code = "from agentnb import _fast; print(_fast.PLAIN, _fast.built is _fast.built_plain)"
    for value, expected in (("1", "True True"), ("", "False False"), ("0", "False False")):
        env = {"AGENTNB_PLAIN": value, "PATH": ""}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        assert out.stdout.split() == expected.split(), (value, out.stderr)


def test_built_is_model_construct():
    fields = {"role": "user", "content": "你好", "name": None}
    for built in (_fast.built_fast, _fast.built_plain):
        message = built(UserMessage, dict(fields), {"content"})
        assert message == UserMessage(content="你好")
        assert message.model_fields_set == {"content"} and message.model_extra == {}
        assert message.wire() == {"role": "user", "content": "你好"}
    function = {"name": "f", "arguments": "{}"}
    for built in (_fast.built_fast, _fast.built_plain):
        fn = built(FunctionCall, dict(function), {"name", "arguments"})
        call = built(
            ToolCall, {"id": "c", "type": "function", "function": fn}, {"id", "type", "function"}
        )
        assert call == ToolCall.make("c", "f", "{}") and call.model_fields_set >= {"type"}


@given(st.text(), st.one_of(st.none(), st.text()))
def test_dump_is_model_dump(content: str, name: str | None):
    message = (
        AssistantMessage(content=content, name=name) if name else AssistantMessage(content=content)
    )
    assert _fast.dump_fast(message) == _fast.dump_plain(message)


@given(json_values)
def test_loads_is_json_loads(value: Any):
    text = json.dumps(value, ensure_ascii=False)
    assert _fast.loads_fast(text) == _fast.loads_plain(text) == json.loads(text)
    for bad in (" " + text, text + " x", "", "{", "nan?"):
        outcomes = []
        for loads in (_fast.loads_fast, _fast.loads_plain):
            try:
                outcomes.append(("ok", loads(bad)))
            except ValueError as exc:
                outcomes.append(("error", str(exc)))
        assert outcomes[0] == outcomes[1], bad


@given(json_values)
def test_dumps_with_is_the_json_encoder(value: Any):
    fast, plain = _fast.dumps_with_fast(str), _fast.dumps_with_plain(str)
    assert fast(value) == plain(value) == json.dumps(value, ensure_ascii=False)


def test_dumps_with_uses_the_default_and_refuses_what_json_cannot_hold():
    for dumps in (_fast.dumps_with_fast(str), _fast.dumps_with_plain(str)):
        assert dumps({"d": Decimal("1.5"), "s": "北京"}) == '{"d": "1.5", "s": "北京"}'
        with pytest.raises(ValueError):
            dumps({"x": math.nan})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(RecursionError):
        _fast.dumps_with_fast(str)(loop)
    with pytest.raises(ValueError):
        _fast.dumps_with_plain(str)(loop)


# The hand-made eager start is 3.11's (its task runs a generator-based coroutine, which 3.12's
# Task refuses); 3.12 and later select the language's own (_fast.eager).
EAGERS = [_fast.eager_plain]
EAGERS.append(_fast.eager_builtin if sys.version_info >= (3, 12) else _fast.eager_fast)


@pytest.mark.parametrize("eager", EAGERS, ids=lambda f: f.__name__)
async def test_eager_runs_a_task_of_its_own_with_its_own_context(eager: Any):
    flag: contextvars.ContextVar[str] = contextvars.ContextVar("flag", default="caller")
    outer = asyncio.current_task()
    seen: list[Any] = []

    async def instant(x: int) -> int:
        seen.append((asyncio.current_task(), flag.get()))
        flag.set("coroutine")
        return x

    async def waits(x: int) -> int:
        seen.append(asyncio.current_task())
        await asyncio.sleep(0)
        return x * 2

    async def fails() -> None:
        raise KeyError("boom")

    task, outcome = eager(instant(1), lambda v: v + 1)
    if outcome is None:  # the plain twin: it starts on the next turn
        assert await task == 2
    else:
        assert outcome == (True, 2)
    assert seen[0][0] is not outer and seen[0][0] is task and flag.get() == "caller"
    task, outcome = eager(waits(2), str)
    assert outcome is None and await task == "4" and seen[-1] is task
    task, outcome = eager(fails(), str)
    if outcome is None:
        with pytest.raises(KeyError):
            await task
    else:
        assert outcome[0] is False and isinstance(outcome[1], KeyError)


@pytest.mark.parametrize("eager", EAGERS, ids=lambda f: f.__name__)
async def test_an_eager_task_is_cancelled_like_any_task(eager: Any):
    got: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            got.append("cancelled")
            raise

    task, outcome = eager(slow(), str)
    assert outcome is None
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert got == ["cancelled"]


class Items(list[Any]):
    __slots__ = ()


def test_extended_grows_in_place_only_when_nobody_else_holds_the_list():
    class Owner:
        items = Items([{"n": 0}])

    owner = Owner()
    first = owner.items
    del first
    before = id(owner.items)
    owner.items = _fast.extended(owner.items, [{"n": 1}])
    if _fast.extended is _fast.extended_fast:
        assert id(owner.items) == before  # nobody held it: grown in place
    kept = owner.items  # a model keeps the list it was sent
    owner.items = _fast.extended(owner.items, [{"n": 2}])
    assert kept == [{"n": 0}, {"n": 1}] and owner.items == [*kept, {"n": 2}]
    assert type(owner.items) is Items
    for extended in (_fast.extended_fast, _fast.extended_plain):
        base = Items([1])
        assert extended(base, [2, 3]) == [1, 2, 3]


# -- the tricks live in _fast.py only ------------------------------------------------------------
INTERNALS = (
    "__pydantic_",
    "scan_once",
    "c_make_encoder",
    "getrefcount",
    "_enter_task",
    "_leave_task",
)


def _third_party_private(module: str, source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if not node.module.startswith("agentnb"):
                found += [
                    f"from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
        elif isinstance(node, ast.Attribute):
            name = node.attr
            if any(name.startswith(p) or name == p for p in INTERNALS):
                found.append(ast.unparse(node))
    return [f"{module}: {f}" for f in found]


def test_library_internals_appear_only_in_fast_py():
    found = [
        site
        for module, source in SOURCES.items()
        if module != "agentnb._fast"
        for site in _third_party_private(module, source)
    ]
    assert not found, "\n".join(found)
    assert _third_party_private("agentnb._fast", SOURCES["agentnb._fast"])  # seen there
