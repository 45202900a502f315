"""A hostile or careless MCP server (issue 27: H8, M10, the low findings on names): its
listing is bounded in pages, tools and time; its names become names the model API takes,
distinct and stable; its results are bounded like every tool's."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

import agentnb as an
from agentnb.events import ToolFinished
from agentnb.tools.results import MAX_RESULT_CHARS
from tests.helpers import assert_valid_conversation, call, calls
from tests.tools.test_mcp import SERVER

mcp = pytest.importorskip("mcp", reason="the `mcp` extra is not installed (make dev installs it)")


class Endless:
    """A server that hands out a new cursor with every page, forever."""

    def __init__(self, per_page: int = 1) -> None:
        self.per_page = per_page
        self.pages = 0

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        self.pages += 1
        tools = [
            {"name": f"t{self.pages}_{i}", "inputSchema": {"type": "object"}}
            for i in range(self.per_page)
        ]
        return {"tools": tools, "nextCursor": f"page-{self.pages}"}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": name}]}


async def test_a_cursor_that_never_ends_is_refused_after_max_pages():
    server = Endless()
    with pytest.raises(an.ToolDefinitionError, match="past 100 pages"):
        await an.tools.from_mcp(server)
    assert server.pages == 100
    assert len(await an.tools.from_mcp(Listing(5))) == 5  # a finite listing is read whole


async def test_too_many_tools_are_refused_with_the_option_to_take_more():
    server = Endless(per_page=400)
    with pytest.raises(an.ToolDefinitionError, match="more than 1,000 tools") as refused:
        await an.tools.from_mcp(server)
    assert server.pages == 3 and "max_tools=N" in str(refused.value)
    tools = await an.tools.from_mcp(Listing(1500), max_tools=2000)
    assert len(tools) == 1500


class Listing(Endless):
    """``count`` tools over pages of 100, then no cursor."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        start = int(cursor or 0)
        stop = min(start + 100, self.count)
        page: dict[str, Any] = {
            "tools": [
                {"name": f"tool_{i}", "inputSchema": {"type": "object"}} for i in range(start, stop)
            ]
        }
        if stop < self.count:
            page["nextCursor"] = str(stop)
        return page


class Stalled(Endless):
    """A server whose second page never comes."""

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        if cursor is not None:
            await asyncio.Event().wait()  # never set
        return await super().list_tools(cursor)


async def test_a_listing_that_stalls_ends_at_the_timeout():
    with pytest.raises(an.ToolDefinitionError, match=r"within 0.2 s \(1 pages, 1 tools read\)"):
        await an.tools.from_mcp(Stalled(), list_timeout=0.2)


class Named(Endless):
    def __init__(self, *names: str) -> None:
        super().__init__()
        self.names = names
        self.called: list[str] = []

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in self.names]}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.called.append(name)
        return {"content": [{"type": "text", "text": f"ran {name}"}]}


async def test_names_that_collide_after_sanitising_stay_apart_and_stable():
    """``a.b`` and ``a_b`` both became ``a_b``: the agent then refused two tools with one
    name. The later one gets a suffix from its own name, the same on every listing."""
    server = Named("a.b", "a_b", "a b")
    tools = await an.tools.from_mcp(server)
    names = [t.name for t in tools]
    assert names[0] == "a_b" and len(set(names)) == 3
    assert all(n.startswith("a_b_") and len(n) == 10 for n in names[1:])
    assert [t.name for t in await an.tools.from_mcp(Named("a.b", "a_b", "a b"))] == names
    assert [t.mcp_name for t in tools] == ["a.b", "a_b", "a b"]  # type: ignore[attr-defined]
    model = an.models.ScriptedModel(
        [
            calls(*(call(f"c{i}", n) for i, n in enumerate(names))),
            {"role": "assistant", "content": "ok"},
        ]
    )
    result = await an.Agent(tools=tools, model=model).run("go")
    assert_valid_conversation(result.session.to_openai())
    assert server.called == ["a.b", "a_b", "a b"]  # each called by the server's own name


async def test_an_over_long_name_is_shortened_not_fatal_to_the_server():
    long = "fetch_" + "very_" * 20 + "long"
    tools = await an.tools.from_mcp(Named("ok", long, ""), prefix="srv_")
    assert tools[0].name == "srv_ok"
    assert len(tools[1].name) == 64 and tools[1].name.startswith("srv_fetch_very_")
    assert tools[2].name.startswith("srv_")  # even an empty name gets one
    assert await tools[1]() == f"ran {long}"


class Referring(Named):
    """A server whose input schema points at a schema on the network."""

    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        city = {"$ref": "http://127.0.0.1:9/city.json"}
        schema = {"type": "object", "properties": {"city": city}}
        return {"tools": [{"name": "weather", "inputSchema": schema}]}


async def test_an_input_schema_referring_to_the_network_is_refused_unless_given():
    with pytest.raises(an.ToolDefinitionError, match="never fetches") as refused:
        await an.tools.from_mcp(Referring())
    assert "MCP tool 'weather'" in str(refused.value) and "include=" in str(refused.value)
    given = {"http://127.0.0.1:9/city.json": {"type": "string", "minLength": 2}}
    (tool,) = await an.tools.from_mcp(Referring(), references=given)
    with pytest.raises(an.tools.InvalidArguments, match="city"):
        tool.validate({"city": "x"})


async def test_a_huge_mcp_result_is_bounded_before_it_reaches_the_transcript():
    """A large result from a real MCP server (the official SDK over stdio): what the model
    reads is cut to the tool's bound and says so; the event notes it for the developer."""
    params = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
    async with mcp.Client(params) as client:
        tools = await an.tools.from_mcp(client, include=["big_page"])
        model = an.models.ScriptedModel(
            [calls(call("c1", "big_page", size=2_000_000)), {"role": "assistant", "content": "ok"}]
        )
        result = await an.Agent(tools=tools, model=model).run("go")
    content = result.session.to_openai()[2]["content"]
    assert len(content) < MAX_RESULT_CHARS + 200 and content.startswith("<html>xxx")
    assert "the result had 2,000,006 characters" in content
    finished = next(e for e in result.events if isinstance(e, ToolFinished))
    assert finished.ok and "cut from 2,000,006" in (finished.note or "")
    assert len(json.dumps(model.requests[1].messages)) < MAX_RESULT_CHARS + 2000


async def test_a_huge_mcp_error_is_bounded_too():
    class Failing(Named):
        async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return {"isError": True, "content": [{"type": "text", "text": "E" * 500_000}]}

    (tool,) = await an.tools.from_mcp(Failing("boom"))
    model = an.models.ScriptedModel(
        [calls(call("c1", "boom")), {"role": "assistant", "content": "ok"}]
    )
    result = await an.Agent(tools=[tool], model=model).run("go")
    content = result.session.to_openai()[2]["content"]
    assert json.loads(content)["kind"] == "tool_error" and len(content) < MAX_RESULT_CHARS + 500
