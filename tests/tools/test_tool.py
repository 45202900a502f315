from __future__ import annotations

import asyncio
from fractions import Fraction
from typing import Annotated, Literal

import pytest
from pydantic import Field

import agentnb as an
from agentnb.tools import to_content


def test_schema_from_signature_and_docstring():
    @an.tool
    def search_hotels(
        city: str,
        check_in_date: str,
        nights: Annotated[int, Field(ge=1, description="晚数")] = 1,
        near: str | None = None,
        sort: Literal["price", "rating"] = "price",
    ) -> dict:
        """查询城市可预订的酒店及价格.

        Returns a list.

        Args:
            city: 城市名
            check_in_date: 入住日期，YYYY-MM-DD
                或 周五 这样的相对日期
            near: 地标，如 西湖
        """
        return {}

    assert search_hotels.name == "search_hotels"
    assert search_hotels.description == "查询城市可预订的酒店及价格.\n\nReturns a list."
    assert search_hotels.schema == {
        "type": "function",
        "function": {
            "name": "search_hotels",
            "description": "查询城市可预订的酒店及价格.\n\nReturns a list.",
            "parameters": {
                "additionalProperties": False,
                "type": "object",
                "required": ["city", "check_in_date"],
                "properties": {
                    "city": {"type": "string", "description": "城市名"},
                    "check_in_date": {
                        "type": "string",
                        "description": "入住日期，YYYY-MM-DD 或 周五 这样的相对日期",
                    },
                    "nights": {
                        "type": "integer",
                        "minimum": 1,
                        "default": 1,
                        "description": "晚数",
                    },
                    "near": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "default": None,
                        "description": "地标，如 西湖",
                    },
                    "sort": {"enum": ["price", "rating"], "type": "string", "default": "price"},
                },
            },
        },
    }
    assert search_hotels("北京", "2025-01-10") == {}  # still callable


def test_sphinx_docstrings_and_a_property_named_title():
    @an.tool(name="lookup", description="Look a book up.")
    def f(title: str, year: int) -> str:
        """Ignored.

        :param title: the book's title
        :param int year: publication year
        """
        return title

    props = f.parameters["properties"]
    assert props["title"] == {"type": "string", "description": "the book's title"}
    assert props["year"]["description"] == "publication year"
    assert f.name == "lookup" and f.description == "Look a book up."


def test_definition_errors_are_clear():
    def untyped(city):  # type: ignore[no-untyped-def]
        return city

    with pytest.raises(
        an.ToolDefinitionError, match="parameter 'city' of tool 'untyped' has no type"
    ):
        an.tool(untyped)
    with pytest.raises(an.ToolDefinitionError, match=r"name=\.\.\."):
        an.tool(lambda x: x)
    with pytest.raises(an.ToolDefinitionError, match=r"takes \*args"):

        @an.tool
        def g(*args: str) -> None:
            """x"""

    with pytest.raises(an.ToolDefinitionError, match="not allowed"):
        an.tool(name="查询 天气")(lambda x: x)
    with pytest.raises(an.ToolDefinitionError, match="two tools are named 'f'"):

        def f(x: int) -> int:
            return x

        an.Toolset([f, an.tool(f)])


def test_execution_options():
    @an.tool
    def sync_tool(x: int) -> int:
        """x"""
        return x

    @an.tool(threaded=False, timeout=2, sequential=True)
    def inline(x: int) -> int:
        """x"""
        return x

    @an.tool
    async def async_tool(x: int) -> int:
        """x"""
        await asyncio.sleep(0)
        return x

    assert sync_tool.threaded and not inline.threaded and not async_tool.threaded
    assert inline.timeout == 2 and inline.sequential and async_tool.is_async


def test_toolset_schema_cache_follows_changes():
    ts = an.Toolset()
    first = ts.schemas()
    ts.add(lambda_tool())
    assert ts.schemas() is not first and ts.names == ["echo"]
    assert "echo" in ts and len(ts) == 1 and ts["echo"].name == "echo"
    ts.remove("echo")
    assert ts.schemas() == []


def lambda_tool() -> an.Tool:
    def echo(text: str) -> str:
        """Echo."""
        return text

    return an.tool(echo)


def test_to_content():
    assert to_content("晴") == "晴"
    assert to_content({"city": "北京"}) == '{"city": "北京"}'
    assert to_content([1, 2]) == "[1, 2]"
    assert to_content({"x": Fraction(1, 3)}) == '{"x": "1/3"}'  # JSON cannot hold it: its str()


def test_only_the_schemas_own_warnings_make_a_tool_definition_error(monkeypatch):
    """A ResourceWarning from an unrelated unclosed socket, collected while @an.tool built
    its schema, became a ToolDefinitionError (1 run in 26 of a sweep binding tools per run;
    issue 36). Another object's warning passes through as it came; the schema's own still
    refuse the tool."""
    import warnings

    from agentnb.tools import signature

    real = signature.create_model

    def meanwhile(category):
        def create_model(*args, **kwargs):
            warnings.warn("unclosed <socket.socket fd=7>", category, stacklevel=1)
            return real(*args, **kwargs)

        return create_model

    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    for category in (ResourceWarning, RuntimeWarning, DeprecationWarning):
        monkeypatch.setattr(signature, "create_model", meanwhile(category))
        with pytest.warns(category, match="unclosed"):
            made = an.tool(lookup)
        assert made.schema["function"]["parameters"]["required"] == ["city"]
    monkeypatch.setattr(signature, "create_model", meanwhile(UserWarning))
    with pytest.raises(an.ToolDefinitionError, match="cannot be described to a model: unclosed"):
        an.tool(lookup)
