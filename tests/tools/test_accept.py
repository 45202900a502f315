"""The fast check of a given schema (issue 26: validators computed once per tool, per-call
cost flat): it may only say "fits" when jsonschema agrees, and it must say so for the calls
real catalogues get, or it buys nothing."""

from __future__ import annotations

import json
import time
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from referencing.jsonschema import DRAFT202012

import agentnb as an
from agentnb.tools import references
from agentnb.tools.accept import compile_check
from agentnb.tools.budget import DEADLINE

NAMES = ["a", "b", "c"]
CLS = jsonschema.Draft202012Validator

SAMPLES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    0.0,
    1.5,
    2,
    2.5,
    0.5,
    3,
    10**20,
    1e20,
    "",
    "a",
    "ab",
    "abc",
    "x",
    "2025-01-10",
    "2025-13-45",
    "a@b.cn",
    [],
    [1],
    [1, 1.0],
    [True, 1],
    ["a", "a"],
    [{"a": 1}, {"a": 1.0}],
    [[1], [True]],
    [1, "1"],
    {},
    {"a": 1},
    {"a": 1, "b": 2},
    {"a": True},
    {"z": None},
]

#: One schema per keyword and boundary the fast check covers (and two it must defer).
LEAVES: list[Any] = [
    *({"type": t} for t in ["string", "integer", "number", "boolean", "null", "object", "array"]),
    {"type": ["string", "null"]},
    {"type": ["integer", "boolean"]},
    {"enum": ["a", "ab"]},
    {"enum": [1, None, True]},
    {"enum": [[1], {"a": 1}]},
    {"const": 1},
    {"const": True},
    {"const": {"a": 1.0}},
    {"const": [1, "1"]},
    *(
        {k: n}
        for k in [
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
        ]
        for n in (0, 1, 2)
    ),
    *(
        {k: n}
        for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
        for n in (0, 1, 1.5, 10**20)
    ),
    {"multipleOf": 2},
    {"multipleOf": 0.5},
    {"uniqueItems": True},
    {"uniqueItems": False},
    {"pattern": "^a"},
    {"pattern": "b$"},
    {"pattern": r"^\d{4}-\d{2}-\d{2}$"},
    {"format": "date"},
    {"format": "email"},
    {"format": "no-such-format"},
    {"not": {"type": "string"}},
    {"oneOf": [{"type": "string"}, {"const": "a"}]},
    {"x-vendor": 1, "type": "string"},
    True,
    False,
    {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"properties": {"a": True, "b": {}}, "additionalProperties": False},
    {"additionalProperties": {"type": "integer"}},
    {"properties": {"a": {"type": "integer"}}, "additionalProperties": {"const": 2}},
    {"items": {"type": "integer"}},
    {"items": False},
    {"items": {"items": {"const": 1}}},
    {"allOf": [{"type": "number"}, {"minimum": 1}]},
    {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "boolean"}}]},
    {"$defs": {"n": {"$anchor": "n", "type": "integer"}}, "properties": {"a": {"$ref": "#n"}}},
    {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
    {
        "$defs": {"t": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/t"}}},
        "$ref": "#/$defs/t",
    },
]


def _fits(schema: Any, value: Any) -> bool | None:
    """The fast check's answer (None: it has none for this schema)."""
    if not isinstance(schema, dict):
        return None
    check = compile_check(schema, CLS)
    if check is None:
        return None
    token = DEADLINE.set(time.thread_time() + 1)
    try:
        return check(value)
    finally:
        DEADLINE.reset(token)


def _valid(schema: Any, value: Any) -> bool:
    return CLS(schema, format_checker=CLS.FORMAT_CHECKER).is_valid(value)


@pytest.mark.parametrize("schema", LEAVES, ids=[json.dumps(s) for s in LEAVES])
def test_each_keyword_agrees_with_jsonschema_on_every_sample(schema):
    """Where the fast check answers, it answers as jsonschema does (the one exception it is
    allowed, a "no" that defers, is limited to what it does not cover)."""
    for value in SAMPLES:
        fits = _fits(schema, value)
        if fits is None or (not fits and _deferred(schema)):
            continue
        assert fits == _valid(schema, value), value


def _deferred(schema: dict[str, Any]) -> bool:
    """What the fast check leaves to jsonschema: fractional steps, references to anchors."""
    fractional = "multipleOf" in schema and type(schema["multipleOf"]) is not int
    return fractional or '"$ref": "#n"' in json.dumps(schema)


scalars = st.sampled_from([s for s in SAMPLES if not isinstance(s, list | dict)])
values = st.recursive(
    st.one_of(scalars, st.sampled_from(SAMPLES)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*NAMES, "z"]), inner, max_size=3),
    ),
    max_leaves=6,
)


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(
            lambda props, req, extra: {
                "type": "object",
                "properties": props,
                "required": req,
                **({} if extra is None else {"additionalProperties": extra}),
            },
            st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
            st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
            st.one_of(st.none(), st.booleans(), inner),
        ),
        st.builds(lambda s: {"type": "array", "items": s}, inner),
        st.builds(lambda xs: {"allOf": xs}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda s: {"$defs": {"s": s}, "$ref": "#/$defs/s"}, inner),
        st.builds(
            lambda a, b: {**a, **b} if isinstance(a, dict) and isinstance(b, dict) else a,
            inner,
            inner,
        ),
    )


schemas = st.recursive(st.sampled_from(LEAVES), _schemas, max_leaves=6)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, value=values)
def test_composed_the_fast_check_never_says_fits_where_jsonschema_does_not(schema, value):
    assume(isinstance(schema, dict))
    try:  # what a tool would refuse at creation is never checked
        CLS.check_schema(schema)
        references.check(schema, references.registry({}, DRAFT202012), DRAFT202012)
    except (jsonschema.SchemaError, references.SchemaProblem):
        assume(False)
    if _fits(schema, value):
        assert _valid(schema, value), (schema, value)


CATALOGUE = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1, "description": "城市"},
        "date": {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "nights": {"type": "integer", "minimum": 1, "maximum": 30},
        "cabin": {"enum": ["economy", "business"]},
        "guests": {
            "type": "array",
            "items": {"$ref": "#/$defs/guest"},
            "uniqueItems": True,
            "maxItems": 4,
        },
        "budget": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "tags": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
    },
    "required": ["city", "date"],
    "additionalProperties": False,
    "$defs": {
        "guest": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name"],
            "x-order": 1,
        }
    },
}


class _Unused:
    def iter_errors(self, value: Any) -> Any:
        raise AssertionError("jsonschema was asked about a call that fits")


def test_calls_that_fit_a_real_catalogue_are_confirmed_without_jsonschema():
    tool = an.Tool.from_openai({"name": "book", "parameters": CATALOGUE}, lambda **kw: kw)
    good = {
        "city": "北京",
        "date": "2025-01-10",
        "nights": 2,
        "cabin": "economy",
        "guests": [{"name": "张三", "age": 30}, {"name": "李四"}],
        "budget": 1200.5,
        "tags": ["quiet"],
    }
    checker = tool._check  # type: ignore[attr-defined]
    slow, checker._validator = checker._validator, _Unused()
    assert tool.validate(good) == good  # confirmed by the fast check alone
    assert tool.validate({"city": "上海", "date": "2025-02-01", "budget": None})
    checker._validator = slow
    with pytest.raises(an.tools.InvalidArguments) as bad:
        tool.validate({**good, "nights": 0, "date": "2025-13-45"})
    fields = {p["field"] for p in bad.value.problems}
    assert fields == {"nights", "date"}  # a "no" is worded by jsonschema, field by field
