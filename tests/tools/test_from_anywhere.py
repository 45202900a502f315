"""Tools from anywhere: any JSON property name as a parameter, a JSON schema given as is
(``an.tool(fn, parameters=...)``, ``an.Tool.from_openai``), ``strict=True`` (issue 14, 1)."""

from __future__ import annotations

import copy
import datetime
import enum
import json
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from pydantic import Field

import agentnb as an
from agentnb.tools import InvalidArguments
from tests.helpers import assert_valid_conversation, call, calls, content

#: The names a public benchmark's catalogue used and agentnb 0.1 refused (issue 14).
REFUSED_BEFORE = [
    "_from",
    "_class",
    "schema",
    "dict",
    "json",
    "copy",
    "validate",
    "model_config",
    "model_fields",
    "model_dump",
    "model_validate",
    "model_json_schema",
    "fields",
    "construct",
]


def _tool_with_parameter(pname: str) -> an.Tool:
    namespace: dict[str, Any] = {}
    exec(f"def lookup({pname}: int, city: str = '杭州') -> dict:\n    return locals()", namespace)
    return an.tool(namespace["lookup"])


@pytest.mark.parametrize("pname", REFUSED_BEFORE)
def test_every_refused_name_is_a_parameter_the_model_sees_and_sends(pname):
    lookup = _tool_with_parameter(pname)
    assert lookup.parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {pname: {"type": "integer"}, "city": {"type": "string", "default": "杭州"}},
        "required": [pname],
    }
    assert lookup.validate({pname: 5}) == {pname: 5, "city": "杭州"}
    with pytest.raises(InvalidArguments) as err:
        lookup.validate({pname: "five", "p0": 1})
    assert err.value.problems[0]["field"] == pname
    assert "p0" in {p["field"] for p in err.value.problems}  # internal names are not aliases
    assert "pydantic" not in str(err.value).lower()


@pytest.mark.parametrize("pname", ["_from", "schema", "json", "model_config"])
async def test_reserved_names_run_end_to_end_with_the_original_name_on_the_wire(pname):
    lookup = _tool_with_parameter(pname)
    model = an.models.ScriptedModel(
        [
            calls(call("c1", "lookup", **{pname: 3})),
            calls(call("c2", "lookup", **{pname: "x"})),
            {"role": "assistant", "content": "done"},
        ]
    )
    result = await an.Agent(tools=[lookup], model=model).run("go")
    wire = result.session.to_openai()
    assert_valid_conversation(wire)
    assert content(wire[2]) == {pname: 3, "city": "杭州"}
    bad = content(wire[4])
    assert bad["kind"] == "invalid_arguments" and bad["problems"][0]["field"] == pname
    sent = model.requests[0].tools[0]["function"]["parameters"]["properties"]
    assert list(sent) == [pname, "city"]


def test_an_alias_advertises_a_name_python_cannot_spell():
    @an.tool
    def trains(from_: Annotated[str, Field(alias="from", description="出发站")], to: str) -> str:
        return f"{from_}->{to}"

    assert list(trains.parameters["properties"]) == ["from", "to"]
    assert trains.parameters["properties"]["from"] == {"type": "string", "description": "出发站"}
    assert trains.validate({"from": "杭州", "to": "上海"}) == {"from_": "杭州", "to": "上海"}


class Opaque: ...


def _takes_opaque(city: str, where: Opaque) -> str: ...


def _takes_callable(pick: Callable[[int], int]) -> str: ...


def _takes_a_set_of_opaque(when: str, cities: set[Opaque]) -> str: ...


@pytest.mark.parametrize(
    "fn,name,shown",
    [
        (_takes_opaque, "where", "(Opaque)"),
        (_takes_callable, "pick", "Callable[[int], int]"),
        (_takes_a_set_of_opaque, "cities", "set["),
    ],
)
def test_definition_errors_name_the_parameter_and_never_mention_pydantic(fn, name, shown):
    with pytest.raises(an.ToolDefinitionError) as err:
        an.tool(fn)
    text = str(err.value)
    assert f"parameter {name!r}" in text and shown in text, text
    assert "pydantic" not in text.lower() and "core_schema" not in text
    assert "parameters=" in text  # the way out: give the schema yourself


# -- strict ------------------------------------------------------------------------------


def test_strict_refuses_lax_coercion_the_default_keeps_it():
    def book(nights: int, price: float, when: Annotated[str, Field(pattern=r"^\d{4}-")]) -> str:
        return "ok"

    lax, strict = an.tool(book), an.tool(book, strict=True)
    args = {"nights": "5", "price": 3, "when": "2025-01-10"}
    assert lax.validate(args)["nights"] == 5
    with pytest.raises(InvalidArguments) as err:
        strict.validate(args)
    assert [p["field"] for p in err.value.problems] == ["nights"]  # 3 is still a fine float
    assert strict.validate({"nights": 5, "price": 3, "when": "2025-01-10"})["price"] == 3.0
    assert strict.strict and not lax.strict


class Sort(enum.Enum):
    price = "price"


def test_strict_still_reads_json_types_as_json_does():
    @an.tool(strict=True)
    def f(day: datetime.date, sort: Sort) -> str:
        return "ok"

    assert f.validate({"day": "2025-01-10", "sort": "price"}) == {
        "day": datetime.date(2025, 1, 10),
        "sort": Sort.price,
    }


# -- a JSON schema given as is -----------------------------------------------------------

#: A catalogue entry (the shape of public function-calling benchmarks and MCP servers).
CATALOGUE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "_from": {"type": "string", "description": "起点城市", "minLength": 1},
        "schema": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
        "date": {"type": "string", "format": "date"},
        "passengers": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer", "minimum": 0, "maximum": 120},
                    "contact": {
                        "type": "object",
                        "properties": {"email": {"type": "string", "format": "email"}},
                        "required": ["email"],
                        "additionalProperties": False,
                    },
                },
                "required": ["name", "age"],
            },
        },
        "budget": {"type": "number", "exclusiveMinimum": 0, "default": 1000},
    },
    "required": ["_from", "date", "passengers"],
    "additionalProperties": False,
}

GOOD = {
    "_from": "杭州",
    "date": "2025-05-01",
    "passengers": [{"name": "王", "age": 30, "contact": {"email": "w@example.com"}}],
}


def _book(**kwargs: Any) -> dict[str, Any]:
    return kwargs


def test_a_catalogue_schema_round_trips_exactly_and_validates():
    given = copy.deepcopy(CATALOGUE)
    book = an.tool(_book, name="book_flight", description="订机票", parameters=given)
    assert book.parameters == CATALOGUE and book.parameters is not given  # a copy
    assert book.schema == {
        "type": "function",
        "function": {"name": "book_flight", "description": "订机票", "parameters": CATALOGUE},
    }
    given["properties"].clear()  # the caller's dict may change later; the tool's does not
    assert book.parameters == CATALOGUE
    assert json.loads(json.dumps(book.schema)) == book.schema
    assert book.validate(GOOD) == GOOD


@pytest.mark.parametrize(
    "change,field,words",
    [
        ({"schema": "first"}, "schema", "is not one of"),
        ({"date": "2025-13-40"}, "date", "is not a 'date'"),
        ({"passengers": []}, "passengers", "should be non-empty"),
        ({"passengers": [{"name": "a", "age": 1}] * 5}, "passengers", "is too long"),
        ({"passengers": [{"name": "a", "age": 130}]}, "passengers[0].age", "maximum"),
        ({"passengers": [{"name": "a", "age": "30"}]}, "passengers[0].age", "not of type"),
        (
            {"passengers": [{"name": "a", "age": 1, "contact": {"email": "nope"}}]},
            "passengers[0].contact.email",
            "is not a 'email'",
        ),
        (
            {"passengers": [{"name": "a", "age": 1, "contact": {}}]},
            "passengers[0].contact.email",
            "required argument is missing",
        ),
        ({"budget": 0}, "budget", "less than or equal to the minimum"),
        ({"_from": ""}, "_from", "should be non-empty"),
        ({"seat": "12A"}, "seat", "unexpected argument"),
    ],
)
def test_each_broken_argument_is_named_by_its_path(change, field, words):
    book = an.tool(_book, name="book_flight", parameters=CATALOGUE)
    with pytest.raises(InvalidArguments) as err:
        book.validate({**GOOD, **change})
    problems = err.value.problems
    assert [p["field"] for p in problems] == [field], problems
    assert words in problems[0]["problem"]


def test_a_missing_required_argument_is_named():
    book = an.tool(_book, name="book_flight", parameters=CATALOGUE)
    with pytest.raises(InvalidArguments) as err:
        book.validate({"date": "2025-05-01"})
    assert {p["field"]: p["problem"] for p in err.value.problems} == {
        "_from": "required argument is missing",
        "passengers": "required argument is missing",
    }


async def test_a_schema_tool_in_a_run_gets_arguments_as_sent_and_structured_errors():
    seen: list[dict[str, Any]] = []

    def book(**kwargs: Any) -> str:
        seen.append(kwargs)
        return "booked"

    tool = an.tool(book, name="book_flight", parameters=CATALOGUE)
    model = an.models.ScriptedModel(
        [
            calls(call("c1", "book_flight", **{**GOOD, "date": "明天"})),
            calls(call("c2", "book_flight", **GOOD)),
            {"role": "assistant", "content": "订好了"},
        ]
    )
    result = await an.Agent(tools=[tool], model=model).run("订票")
    wire = result.session.to_openai()
    assert_valid_conversation(wire)
    bad = content(wire[2])
    assert bad["kind"] == "invalid_arguments"
    assert bad["problems"] == [{"field": "date", "problem": "'明天' is not a 'date'"}]
    assert wire[4]["content"] == "booked" and seen == [GOOD]
    assert model.requests[0].tools == [tool.schema]


def test_from_openai_advertises_the_dict_exactly():
    spec = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "strict": True,
        },
    }
    weather = an.Tool.from_openai(copy.deepcopy(spec), lambda city: f"{city}: 晴")
    assert weather.schema == spec and weather.name == "get_weather"
    assert weather.description == "Weather of a city."
    assert weather.validate({"city": "杭州"}) == {"city": "杭州"}
    inner = an.Tool.from_openai(spec["function"], lambda city: city, timeout=3)
    assert inner.schema == spec and inner.timeout == 3
    bare = an.Tool.from_openai({"name": "ping"}, lambda: "pong")
    assert bare.schema == {"type": "function", "function": {"name": "ping"}}
    assert bare.validate({}) == {}


@pytest.mark.parametrize(
    "args,words",
    [
        (({"parameters": {"type": "array"}},), "of type 'object'"),
        (({"parameters": {"type": "object", "properties": {"a": {"type": 5}}}},), "not a valid"),
        (({"no": "name"},), "an OpenAI tool is"),
    ],
)
def test_from_openai_refuses_what_cannot_be_a_tool(args, words):
    spec = args[0] if "no" in args[0] else {"name": "t", **args[0]}
    with pytest.raises(an.ToolDefinitionError, match=words):
        an.Tool.from_openai(spec, lambda **kw: kw)


def test_a_schema_and_its_function_must_agree():
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    with pytest.raises(an.ToolDefinitionError, match="no parameter 'city'"):
        an.tool(lambda town: town, name="t", parameters=schema)
    with pytest.raises(an.ToolDefinitionError, match="needs 'date'"):
        an.tool(lambda city, date: city, name="t", parameters=schema)
    assert an.tool(lambda city, date="x": city, name="t", parameters=schema).name == "t"


def test_a_dict_where_a_function_belongs_points_at_from_openai():
    with pytest.raises(an.ToolDefinitionError, match="from_openai"):
        an.Tool({"type": "function"})  # type: ignore[arg-type]
