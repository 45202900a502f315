"""MCP servers' tools as agent tools, end to end: the tests start a small MCP server
(tests/servers/mcp_server.py, the official SDK) over stdio and over streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import agentnb as an
from agentnb.events import ToolFinished
from tests.helpers import assert_valid_conversation, call, calls, eventually_sync

mcp = pytest.importorskip("mcp", reason="the `mcp` extra is not installed (make dev installs it)")

SERVER = Path(__file__).parents[1] / "servers" / "mcp_server.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The MCP server over streamable HTTP on a free loopback port, for this module."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def listening() -> bool:
            assert proc.poll() is None, "the MCP server exited"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return True
            return False

        eventually_sync(listening, 30, what="the MCP server listening")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.asynccontextmanager
async def connected(transport: str, url: str | None = None) -> AsyncIterator[Any]:
    if transport == "stdio":
        params = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
        async with mcp.Client(params) as client:
            yield client
    else:
        async with mcp.Client(url) as client:
            yield client


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> tuple[str, str | None]:
    if request.param == "http":
        return "http", request.getfixturevalue("http_server")
    return "stdio", None


async def test_the_servers_tools_are_advertised_as_the_server_gives_them(transport):
    async with connected(*transport) as client:
        listing = (await client.list_tools()).model_dump(by_alias=True, exclude_none=True)
        tools = await an.tools.from_mcp(client)
    assert [t.name for t in tools] == ["get_weather", "convert", "record", "broken", "big_page"]
    for tool, spec in zip(tools, listing["tools"], strict=True):
        assert tool.parameters == spec["inputSchema"]  # exactly, titles and all
        assert tool.description == spec["description"]
        assert tool.schema == {
            "type": "function",
            "function": {
                "name": spec["name"],
                "description": spec["description"],
                "parameters": spec["inputSchema"],
            },
        }


async def test_an_agent_runs_mcp_tools_as_ordinary_tool_calls(transport):
    model = an.models.ScriptedModel(
        [
            calls(
                call("c1", "get_weather", city="示例城A", date="2025-05-01"),
                call("c2", "convert", amount=100, to="EUR"),
            ),
            calls(
                call("c3", "get_weather", city="示例城A", date="周五"),
                call("c4", "convert", amount="lots"),
                call("c5", "broken", city="杭州"),
            ),
            {"role": "assistant", "content": "带伞"},
        ]
    )
    async with connected(*transport) as client:
        agent = an.Agent(tools=await an.tools.from_mcp(client), model=model)
        session = an.Session()
        result = await agent.run("示例城A 五一要带伞吗", session=session)
    assert result.output == "带伞" and result.stop_reason == "final_answer"
    wire = session.to_openai()
    assert_valid_conversation(wire)
    results = {m["tool_call_id"]: m["content"] for m in wire if m["role"] == "tool"}
    assert results["c1"] == "示例城A 2025-05-01: 小雨, 降水概率 0.8"
    assert json.loads(results["c2"]) == {"amount": 13.0, "currency": "EUR"}
    bad_date = json.loads(results["c3"])  # checked here against the server's own schema
    assert bad_date["kind"] == "invalid_arguments"
    assert [p["field"] for p in bad_date["problems"]] == ["date"]
    bad_amount = json.loads(results["c4"])
    assert bad_amount["kind"] == "invalid_arguments"
    assert bad_amount["problems"][0]["field"] == "amount"
    failed = json.loads(results["c5"])
    assert failed["kind"] == "tool_error" and "no data for 杭州" in failed["error"]
    finished = {e.call_id: e for e in result.events if isinstance(e, ToolFinished)}
    assert [finished[c].ok for c in ("c1", "c2", "c3", "c4", "c5")] == [
        True,
        True,
        False,
        False,
        False,
    ]
    html = session._repr_mimebundle_()["text/html"]
    assert "get_weather" in html and "降水概率 0.8" in html


async def test_concurrent_calls_share_one_connection():
    async with connected("stdio") as client:
        (record,) = await an.tools.from_mcp(client, include=["record"], prefix="mcp_")
        assert record.name == "mcp_record"
        model = an.models.ScriptedModel(
            [
                calls(*(call(f"c{i}", "mcp_record", note=f"n{i}") for i in range(6))),
                {"role": "assistant", "content": "ok"},
            ]
        )
        result = await an.Agent(tools=[record], model=model).run("记下")
    counts = sorted(m["content"] for m in result.session.to_openai() if m["role"] == "tool")
    assert counts == [f"{i} notes" for i in range(1, 7)]


async def test_include_names_a_tool_the_server_lacks():
    async with connected("stdio") as client:
        with pytest.raises(an.ToolDefinitionError, match="no tool named 'nope'"):
            await an.tools.from_mcp(client, include=["nope"])


def test_a_result_is_read_as_the_model_should_read_it():
    from agentnb.tools.mcp import mcp_result

    text = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert mcp_result(text) == "a\nb"
    assert mcp_result({"content": [], "structuredContent": {"x": 1}}) == {"x": 1}
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    assert mcp_result({"content": [image]}) == [image]
    with pytest.raises(an.ToolError, match="boom"):
        mcp_result({"content": [{"type": "text", "text": "boom"}], "isError": True})
    assert asyncio.iscoroutinefunction(an.tools.from_mcp)


async def test_a_client_session_works_too():
    from mcp.client.stdio import stdio_client

    params = mcp.StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
    async with stdio_client(params) as (read, write), mcp.ClientSession(read, write) as session:
        await session.initialize()
        tools = await an.tools.from_mcp(session, include=["get_weather"])
        assert await tools[0](city="示例城A", date="2025-05-01") == (
            "示例城A 2025-05-01: 小雨, 降水概率 0.8"
        )


class PagedClient:
    """A duck-typed client whose listing comes in two pages (and repeats a cursor)."""

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword
        self.asked: list[Any] = []

    def page(self, cursor: Any) -> dict[str, Any]:
        self.asked.append(cursor)
        if cursor in (None, "p2-again"):
            return {
                "tools": [{"name": "a.b", "inputSchema": {"type": "object"}}],
                "nextCursor": "p2",
            }
        return {"tools": [{"name": "c", "description": "C"}], "nextCursor": "p2"}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"{name}:{json.dumps(arguments)}"}]}


class CursorClient(PagedClient):
    async def list_tools(self, cursor: str | None = None) -> dict[str, Any]:
        return self.page(cursor)


class ParamsClient(PagedClient):
    async def list_tools(self, *, params: Any = None) -> dict[str, Any]:
        return self.page(None if params is None else params.cursor)


@pytest.mark.parametrize("cls", [CursorClient, ParamsClient])
async def test_every_page_of_the_listing_is_read_once(cls):
    client = cls("x")
    tools = await an.tools.from_mcp(client)
    assert [t.name for t in tools] == ["a_b", "c"]  # a name the model API refuses, made safe
    assert client.asked == [None, "p2"]  # a repeated cursor ends the listing
    assert tools[1].parameters == {"type": "object", "properties": {}}
    assert await tools[0]() == "a.b:{}"  # the server is called with its own name
