"""A request body checked against the official SDKs' own request types (their TypedDicts):
every key known to its type, every required key present, every literal one of its values,
each union matched by one of its arms. Stricter than the SDKs (which send what they are
given) and than pydantic on TypedDicts (which ignores unknown keys)."""

from __future__ import annotations

import collections.abc as cabc
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

from typing_extensions import get_type_hints, is_typeddict


def problems(value: Any, tp: Any, where: str = "body") -> list[str]:
    """What in ``value`` does not conform to the type ``tp`` (empty: it conforms)."""
    if tp is Any or tp is object:
        return []
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return problems(value, get_args(tp)[0], where)
    if origin in (Union, types.UnionType):
        found = [problems(value, arm, where) for arm in get_args(tp)]
        return [] if any(not f for f in found) else min(found, key=len)
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{where}: {value!r} not in {get_args(tp)}"]
    if tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: not an object ({tp.__name__})"]
        hints = get_type_hints(tp)
        out = [f"{where}.{k}: unknown to {tp.__name__}" for k in value if k not in hints]
        out += [f"{where}: {k} missing ({tp.__name__})" for k in tp.__required_keys__ - set(value)]
        for key, item in value.items():
            if key in hints:
                out += problems(item, hints[key], f"{where}.{key}")
        return out
    if origin in (list, cabc.Iterable, cabc.Sequence, typing.List):  # noqa: UP006
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (arm,) = get_args(tp) or (Any,)
        return [p for i, v in enumerate(value) for p in problems(v, arm, f"{where}[{i}]")]
    if origin in (dict, cabc.Mapping, typing.Dict):  # noqa: UP006
        return [] if isinstance(value, dict) else [f"{where}: not an object"]
    if tp is float:
        return [] if isinstance(value, int | float) else [f"{where}: not a number"]
    if isinstance(tp, type):
        return [] if isinstance(value, tp) else [f"{where}: not a {tp.__name__}"]
    return []  # a type this check does not read (a TypeVar, a forward reference): accepted
