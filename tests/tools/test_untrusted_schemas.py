"""Hostile JSON schemas (issue 27: H6, H7, M9) and schemas compiled once (issue 24).

A tool's schema comes from a catalogue or an MCP server: data someone else wrote. Checking
arguments against it must never freeze the loop (a backtracking ``pattern``), reach the
network (a ``$ref`` to a URL), or crash the run (a ``$ref`` cycle, a ``false`` subschema);
what goes wrong is a refusal when the tool is made or an ``invalid_arguments`` result.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import agentnb as an
from agentnb.tools import schema as schema_module
from tests.helpers import assert_valid_conversation, call, calls, content


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _tool(parameters: dict[str, Any], **options: Any) -> an.Tool:
    return an.Tool.from_openai({"name": "t", "parameters": parameters}, lambda **kw: kw, **options)


async def _run(tool: an.Tool, **arguments: Any) -> dict[str, Any]:
    """One call of ``tool`` in a run; the result the model read (the run must end well)."""
    model = an.models.ScriptedModel(
        [calls(call("c1", tool.name, **arguments)), {"role": "assistant", "content": "ok"}]
    )
    result = await an.Agent(tools=[tool], model=model).run("go")
    assert result.stop_reason == "final_answer"
    wire = result.session.to_openai()
    assert_valid_conversation(wire)
    return content(wire[2]) if wire[2]["content"].startswith("{") else {"text": wire[2]}


# -- H6: patterns --------------------------------------------------------------------------


@pytest.mark.timeout(20)  # `re` took over 25 s here (the issue's reproduction)
async def test_the_reported_redos_pattern_is_checked_at_once():
    tool = _tool(_schema(code={"type": "string", "pattern": "^(a+)+$"}))
    result = await _run(tool, code="a" * 34 + "!")
    assert result["kind"] == "invalid_arguments"
    assert result["problems"][0]["field"] == "code"
    assert "does not match" in result["problems"][0]["problem"]


@pytest.mark.timeout(20)
async def test_a_pattern_that_backtracks_without_end_is_stopped_by_the_budget():
    """``(a|aa)+`` backtracks exponentially in every backtracking engine: the check stops
    after the budget and the model reads why; the next call is checked normally."""
    tool = _tool(
        _schema(
            code={"type": "string", "pattern": "^(a|aa)+$"},
            other={"type": "string", "pattern": "^(a|aa)+$"},
        )
    )
    result = await _run(tool, code="a" * 60 + "!", other="a" * 60 + "!")
    assert result["kind"] == "invalid_arguments"
    rows = {row["field"]: row["problem"] for row in result["problems"]}
    assert set(rows) == {"code", "other"}  # the budget is per call, for all its patterns
    assert all(f"within {schema_module.BUDGET:g} s" in p for p in rows.values())
    assert tool.validate({"code": "aaa"}) == {"code": "aaa"}  # a fresh budget


@pytest.mark.timeout(20)
def test_pattern_properties_and_additional_properties_use_the_bounded_engine():
    tool = _tool(
        {
            "type": "object",
            "properties": {"a": {}},
            "patternProperties": {"^(x|xx)+$": {"type": "integer"}},
            "additionalProperties": False,
        }
    )
    assert tool.validate({"xx": 1, "a": 2}) == {"xx": 1, "a": 2}
    with pytest.raises(an.tools.InvalidArguments) as bad:
        tool.validate({"zzz": 1, "x": "no"})
    rows = {(p["field"], p["problem"]) for p in bad.value.problems}
    assert ("zzz", "unexpected argument (not in the schema)") in rows
    assert any(f == "x" and "integer" in p for f, p in rows)
    with pytest.raises(an.tools.InvalidArguments) as slow:
        tool.validate({"x" * 60 + "!": 1})
    assert "could not be checked" in slow.value.problems[0]["problem"]


def test_additional_properties_beside_pattern_properties_is_not_skipped():
    """The row builder skipped every unexpected name when the schema had patternProperties:
    ``{"zzz": 1}`` passed a schema that forbids it."""
    tool = _tool(
        {
            "type": "object",
            "patternProperties": {"^x": {}},
            "additionalProperties": False,
        }
    )
    with pytest.raises(an.tools.InvalidArguments, match="zzz: unexpected argument"):
        tool.validate({"zzz": 1})


def test_a_pattern_the_bounded_engine_cannot_compile_is_refused_at_creation():
    with pytest.raises(an.ToolDefinitionError, match="not a valid JSON schema"):
        _tool(_schema(code={"type": "string", "pattern": "(unclosed"}))


# -- H7: remote references -----------------------------------------------------------------


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server that serves a schema and records every fetch."""
    fetched: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/city.json", fetched
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "make",
    [
        lambda url: _schema(city={"$ref": url}),
        lambda url: {
            "$id": url.replace("city.json", "root.json"),
            **_schema(city={"$ref": "city.json"}),
        },
        lambda url: _schema(city={"allOf": [{"$ref": url + "#/definitions/x"}]}),
        lambda url: _schema(enum={"$ref": url}),  # a property named like a data keyword
    ],
    ids=["absolute", "relative-to-$id", "nested", "property-named-enum"],
)
def test_a_remote_reference_is_refused_and_never_fetched(schema_server, make):
    url, fetched = schema_server
    with pytest.raises(an.ToolDefinitionError, match="never fetches") as refused:
        _tool(make(url))
    assert "references=" in str(refused.value)  # how to allow it
    assert fetched == []


def test_a_remote_reference_resolves_against_documents_the_user_gives(schema_server):
    url, fetched = schema_server
    tool = _tool(_schema(city={"$ref": url}), references={url: {"type": "string"}})
    assert tool.validate({"city": "北京"}) == {"city": "北京"}
    with pytest.raises(an.tools.InvalidArguments, match="not of type 'string'"):
        tool.validate({"city": 5})
    assert fetched == []


def test_a_reference_to_nothing_is_refused_at_creation():
    with pytest.raises(an.ToolDefinitionError, match="points to nothing"):
        _tool(_schema(city={"$ref": "#/$defs/missing"}))


def test_a_reference_to_a_meta_schema_resolves_offline():
    tool = _tool(_schema(inner={"$ref": "https://json-schema.org/draft/2020-12/schema"}))
    assert tool.validate({"inner": {"type": "string"}}) == {"inner": {"type": "string"}}


# -- M9: cycles and false subschemas -------------------------------------------------------


@pytest.mark.parametrize(
    "defs",
    [
        {"a": {"$ref": "#/$defs/a"}},
        {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        {"a": {"anyOf": [{"type": "string"}, {"allOf": [{"$ref": "#/$defs/a"}]}]}},
    ],
    ids=["self", "pair", "through-anyOf-allOf"],
)
def test_a_reference_cycle_is_refused_at_creation_not_a_recursion_error(defs):
    with pytest.raises(an.ToolDefinitionError, match="without end"):
        _tool({"$defs": defs, **_schema(x={"$ref": "#/$defs/a"})})


async def test_a_recursive_schema_that_descends_still_checks_deep_values():
    node = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
    }
    tool = _tool({"$defs": {"node": node}, **_schema(tree={"$ref": "#/$defs/node"})})
    bad = await _run(tool, tree={"kids": [{"kids": [7]}]})
    assert bad["problems"] == [
        {"field": "tree.kids[0].kids[0]", "problem": "7 is not of type 'object'"}
    ]
    deep: dict[str, Any] = {}
    for _ in range(400):  # deeper than the interpreter's recursion limit allows to check
        deep = {"kids": [deep]}
    too_deep = await _run(tool, tree=deep)
    assert too_deep["kind"] == "invalid_arguments"
    assert "nested too deeply" in too_deep["problems"][0]["problem"]


async def test_a_false_subschema_is_an_invalid_argument_naming_its_field():
    """``"x": false`` crashed the run with AttributeError (the hint read ``spec.get``), and
    jsonschema reports a false subschema without its path."""
    tool = _tool(_schema(x=False, y={"type": "string"}))
    result = await _run(tool, x=1, y="ok")
    assert result["kind"] == "invalid_arguments"
    assert result["problems"] == [
        {"field": "x", "problem": "not allowed (the schema accepts no value here)"}
    ]
    assert result["hint"] == "call t with a JSON object of: x (value), y (string)"
    items = _tool(_schema(pair={"prefixItems": [True, False]}))
    with pytest.raises(an.tools.InvalidArguments, match=r"pair\[1\]: not allowed"):
        items.validate({"pair": [1, 2]})


# -- issue 24: compiled once ---------------------------------------------------------------


def test_tools_from_one_schema_share_one_compiled_checker():
    spec = {"name": "t", "parameters": _schema(city={"type": "string", "minLength": 2})}
    schema_module._checker.cache_clear()
    schema_module._compiled.cache_clear()
    first = an.Tool.from_openai(json.loads(json.dumps(spec)), lambda city: city)
    second = an.Tool.from_openai(json.loads(json.dumps(spec)), lambda city: city)
    info = schema_module._checker.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    reordered = {"name": "t", "parameters": dict(reversed(list(spec["parameters"].items())))}
    an.Tool.from_openai(reordered, lambda city: city)  # canonical JSON: key order is no matter
    assert schema_module._compiled.cache_info()[:2] == (1, 1)  # (hits, misses)
    assert first.validate({"city": "北京"}) == second.validate({"city": "北京"})


def test_a_shared_checker_cannot_be_changed_through_a_tool_or_the_callers_dict():
    parameters = _schema(city={"type": "string"})
    tool = _tool(parameters)
    parameters["properties"]["city"]["type"] = "integer"  # the caller's dict
    tool.parameters["properties"]["city"]["type"] = "integer"  # the tool's advertised copy
    other = _tool(_schema(city={"type": "string"}))
    assert other.validate({"city": "北京"}) == {"city": "北京"}
    assert tool.validate({"city": "北京"}) == {"city": "北京"}


def test_a_schema_that_is_not_json_is_refused():
    with pytest.raises(an.ToolDefinitionError, match="not JSON"):
        _tool(_schema(city={"type": "string", "enum": {"a", "b"}}))
    with pytest.raises(an.ToolDefinitionError, match="not JSON"):
        _tool(_schema(n={"type": "number", "maximum": float("nan")}))
