"""The strict-mode rewrite (agentnb.models.strict): every change reported, what strict mode
cannot express refused with the schema left as given, the result in strict mode's subset."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from agentnb.models import OutputType, strict_schema
from agentnb.models.strict import DROPPED, KEPT, REFUSED, strict_tools

LEAVES = [
    {"type": "string"},
    {"type": "integer", "minimum": 0},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "string", "enum": ["a", "b"]},
    {"type": "string", "minLength": 2},
    {"type": ["string", "null"]},
    {"type": "integer", "default": 3},
]


def objects(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    names = st.text("abcdefgh", min_size=1, max_size=4)
    return st.builds(
        lambda props, required, extra: {
            "type": "object",
            "properties": props,
            "required": [k for k in props if k in required],
            **extra,
        },
        st.dictionaries(names, children, min_size=0, max_size=4),
        st.sets(names),
        st.sampled_from([{}, {"additionalProperties": False}, {"description": "d"}]),
    )


schemas = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.one_of(
        objects(inner), st.builds(lambda i: {"type": "array", "items": i}, inner)
    ),
    max_leaves=12,
)
roots = objects(schemas)
odd = st.sampled_from([
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "object"},
    {"not": {"type": "string"}},
    {"type": "array", "prefixItems": [{"type": "string"}]},
    {"allOf": [{"type": "string"}, {"minLength": 1}]},
])  # fmt: skip


def objects_in(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found += objects_in(value)
    elif isinstance(schema, list):
        for value in schema:
            found += objects_in(value)
    return found


def keywords(schema: Any, inside_properties: bool = False) -> set[str]:
    out: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if not inside_properties:
                out.add(key)
            out |= keywords(value, key == "properties")
    elif isinstance(schema, list):
        for value in schema:
            out |= keywords(value)
    return out


@settings(max_examples=150, deadline=None)
@given(roots)
def test_an_expressible_schema_ends_in_the_strict_subset_and_every_change_is_said(schema):
    given_copy = copy.deepcopy(schema)
    rewrite = strict_schema(schema)
    assert schema == given_copy  # the schema given is never changed
    assert rewrite.strict and not rewrite.refused
    for obj in objects_in(rewrite.schema):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert keywords(rewrite.schema) <= KEPT
    if rewrite.schema != schema:
        assert rewrite.changes  # changed, and said so
    again = strict_schema(rewrite.schema)
    assert again.schema == rewrite.schema and not again.changes  # a fixed point


@settings(max_examples=60, deadline=None)
@given(roots, odd, st.text("xyz", min_size=1, max_size=3))
def test_what_strict_mode_cannot_express_is_refused_and_sent_as_given(schema, bad, name):
    schema["properties"][name] = bad
    rewrite = strict_schema(schema)
    assert not rewrite.strict and rewrite.refused
    assert rewrite.schema is schema and rewrite.changes == ()
    assert any(f".{name}" in why for why in rewrite.refused)


def test_the_changes_name_the_place_and_the_reason():
    rewrite = strict_schema({
        "type": "object",
        "properties": {"city": {"type": "string", "minLength": 1}, "nights": {"type": "integer"}},
        "required": ["city"],
    })  # fmt: skip
    assert rewrite.changes == (
        "$: additionalProperties set to false",
        "$.city: dropped 'minLength' (strict mode does not take it; the answer is still "
        "checked against it)",
        "$: optional 'nights' made required and nullable (null stands for 'left out')",
    )
    assert rewrite.schema["properties"]["nights"] == {"type": ["integer", "null"]}
    assert rewrite.nulled == {("nights",)}


def test_a_root_that_is_not_an_object_is_refused():
    assert strict_schema({"type": "array", "items": {"type": "string"}}).refused == (
        "$: the root is 'array', not an object",
    )


def test_refused_keywords_and_dropped_ones_do_not_overlap_the_kept():
    assert not (KEPT & DROPPED) and not (KEPT & set(REFUSED)) and not (DROPPED & set(REFUSED))


class Leg(BaseModel):
    city: str
    note: str = Field("", max_length=20)


class Plan(BaseModel):
    legs: list[Leg]
    nights: int = 1


def test_a_pydantic_model_validates_with_the_nulls_strict_mode_makes_it_write():
    output = OutputType(Plan)
    assert output.spec.strict
    leg = output.spec.schema["$defs"]["Leg"]
    assert leg["required"] == ["city", "note"] and leg["additionalProperties"] is False
    check = output.check('{"legs": [{"city": "北京", "note": null}], "nights": null}')
    assert check.valid and check.value == Plan(legs=[Leg(city="北京")], nights=1)
    too_long = output.check('{"legs": [{"city": "北京", "note": "' + "x" * 30 + '"}], "nights": 2}')
    assert not too_long.valid and "legs.0.note" in too_long.error  # dropped, still checked


def test_a_free_form_map_is_sent_not_strict_and_says_why():
    output = OutputType(dict[str, int])
    assert not output.spec.strict
    assert output.spec.schema == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert output.spec.notes == (
        "not sent strict: $: a free-form map (additionalProperties {'type': 'integer'}) has "
        "no strict form",
    )


def test_strict_tools_send_strict_only_what_keeps_its_meaning():
    def tool(name: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "parameters": params}}

    tools = [
        tool(
            "full", {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
        ),
        tool("optional", {"type": "object", "properties": {"a": {"type": "string"}}}),
        tool("free", {"type": "object", "additionalProperties": True, "properties": {}}),
    ]
    sent, notes = strict_tools(tools)
    assert sent[0]["function"]["strict"] is True
    assert sent[0]["function"]["parameters"]["additionalProperties"] is False
    assert sent[1] is tools[1] and sent[2] is tools[2]
    assert notes == [
        "tool full sent strict ($: additionalProperties set to false)",
        "tool optional not sent strict: its optional parameters (a) would become required, "
        "and arrive as null",
        "tool free not sent strict: $: a free-form map (additionalProperties True) has no "
        "strict form",
    ]


async def test_openai_model_sends_strict_tools_and_says_so_on_the_first_call_only():
    import agentnb as an
    from tests.models.openai_helpers import completion, json_of, model_for

    bodies: list[dict[str, Any]] = []

    def handler(request):
        import httpx

        bodies.append(json_of(request))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "ok"}))

    @an.tool
    def weather(city: str) -> str:
        """Weather of a city."""
        return "晴"

    @an.tool
    def hotels(city: str, nights: int = 1) -> str:
        """Hotels of a city."""
        return "[]"

    model = model_for(handler, strict_tools=True)
    agent = an.Agent("x", [weather, hotels], model=model)
    session = an.Session()
    first = await agent.run("a", session=session)
    second = await agent.run("b", session=session)
    sent = {t["function"]["name"]: t["function"] for t in bodies[0]["tools"]}
    assert sent["weather"]["strict"] is True
    assert sent["weather"]["parameters"]["additionalProperties"] is False
    assert "strict" not in sent["hotels"]  # its optional parameter would arrive as null
    decided = [e for r in (first, second) for e in r.events if e.type == "Decided"]
    assert any("tool hotels not sent strict" in p for p in decided[0].problems)
    assert not decided[1].problems  # said once, on the first call
