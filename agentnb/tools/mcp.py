"""MCP servers' tools as agent tools, through the official ``mcp`` Python SDK (the ``mcp`` extra).

The caller owns the connection - start, stop, transport - and hands over a connected client::

    from mcp import Client, StdioServerParameters

    async with Client(StdioServerParameters(command="python", args=["server.py"])) as client:
        agent = an.Agent(tools=await an.tools.from_mcp(client), model=...)
        result = await agent.run("...")

    async with Client("http://127.0.0.1:8000/mcp") as client: ...   # streamable HTTP

Each MCP tool becomes an ordinary :class:`~agentnb.Tool`: its input schema advertised exactly
as the server gives it and checked before the call (a bad argument is an ``invalid_arguments``
result naming the field, and never reaches the server); each call is one tool call in the
transcript, the events and the view. A result's text is the tool message's content (its
``structuredContent`` when it has no text, its content blocks when they are not text); a
result the server marks ``isError`` is a ``tool_error`` the model reads. Only
``list_tools`` and ``call_tool`` are used, so an ``mcp.ClientSession`` works too.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ToolDefinitionError
from .results import ToolError
from .tool import Tool

__all__ = ["from_mcp", "mcp_result"]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def _dump(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    dumped: dict[str, Any] = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


def mcp_result(result: Any) -> Any:
    """What the model reads of a ``CallToolResult``: its text, else its structured content,
    else the content blocks; an ``isError`` result raises :class:`~agentnb.tools.ToolError`."""
    body = _dump(result)
    blocks = body.get("content") or []
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    if body.get("isError"):
        raise ToolError(text or "the MCP server reported an error", data={"source": "mcp"})
    if blocks and all(b.get("type") == "text" for b in blocks):
        return text  # what the server wrote for models (it mirrors any structured content)
    if not blocks and body.get("structuredContent") is not None:
        return body["structuredContent"]
    return blocks


def _caller(client: Any, name: str) -> Callable[..., Any]:
    async def call(**arguments: Any) -> Any:
        return mcp_result(await client.call_tool(name, arguments))

    call.__name__ = _UNSAFE.sub("_", name)[:64] or "mcp_tool"
    call.__doc__ = f"MCP tool {name!r}"
    return call


async def _next_page(client: Any, cursor: str) -> Any:
    """``Client.list_tools(cursor=...)``, or ``ClientSession.list_tools(params=...)``."""
    if "cursor" in inspect.signature(client.list_tools).parameters:
        return await client.list_tools(cursor=cursor)
    from mcp.types import PaginatedRequestParams

    return await client.list_tools(params=PaginatedRequestParams(cursor=cursor))


async def _listing(client: Any) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    page = _dump(await client.list_tools())
    tools += page.get("tools", [])
    seen: set[str] = set()
    while (cursor := page.get("nextCursor")) and cursor not in seen:
        seen.add(cursor)
        page = _dump(await _next_page(client, cursor))
        tools += page.get("tools", [])
    return [_dump(t) for t in tools]


async def from_mcp(
    client: Any,
    *,
    include: Iterable[str] | None = None,
    prefix: str = "",
    **options: Any,
) -> list[Tool]:
    """The tools of a connected MCP client as agent tools, in the server's order.

    Args:
        client: an entered ``mcp.Client`` (or an initialised ``mcp.ClientSession``).
        include: only these tool names (as the server spells them); all by default.
        prefix: put before each name the model sees (``"weather_"``), to keep two servers'
            tools apart; the server is called with its own name.
        options: passed to :class:`~agentnb.Tool` (``timeout``, ``sequential``, ...).
    """
    wanted = None if include is None else set(include)
    tools, found = [], set()
    for spec in await _listing(client):
        name = str(spec.get("name", ""))
        if wanted is not None and name not in wanted:
            continue
        found.add(name)
        visible = prefix + _UNSAFE.sub("_", name)
        try:
            tools.append(
                Tool(
                    _caller(client, name),
                    name=visible,
                    description=spec.get("description") or "",
                    parameters=spec.get("inputSchema") or {"type": "object", "properties": {}},
                    **options,
                )
            )
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(f"MCP tool {name!r}: {exc}") from None
    if wanted is not None and (missing := wanted - found):
        raise ToolDefinitionError(f"the MCP server has no tool named {sorted(missing)[0]!r}")
    return tools
