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

A server is someone else's code, so the listing is bounded: at most ``max_pages`` pages and
``max_tools`` tools, within ``list_timeout`` seconds (a server that hands out a new cursor
forever is refused, not followed). A name the model API cannot take is made safe (characters
other than letters, digits, ``_`` and ``-`` become ``_``); when that makes two names one, or
a name longer than 64 characters, the later one gets a short stable suffix from its own name
(``get_weather_3f2a9c``) - ``tool.mcp_name`` keeps the server's. Results are bounded like
every tool's (``max_result_chars``).
"""

from __future__ import annotations

import asyncio
import hashlib
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


async def _listing(
    client: Any, max_pages: int, max_tools: int, timeout: float | None
) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    pages = 0

    def add(page: Any) -> Any:
        nonlocal pages
        body = _dump(page)
        pages += 1
        tools.extend(body.get("tools") or [])
        if len(tools) > max_tools:
            raise ToolDefinitionError(
                f"the MCP server lists more than {max_tools:,} tools ({pages} pages read); "
                "pass from_mcp(..., max_tools=N) to take more"
            )
        return body

    try:
        async with asyncio.timeout(timeout):
            page = add(await client.list_tools())
            seen: set[str] = set()
            while (cursor := page.get("nextCursor")) and cursor not in seen:
                if pages >= max_pages:
                    raise ToolDefinitionError(
                        f"the MCP server's tool list goes on past {max_pages} pages (each with "
                        "a new cursor); pass from_mcp(..., max_pages=N) if it is that long"
                    )
                seen.add(cursor)
                page = add(await _next_page(client, cursor))
    except TimeoutError:
        raise ToolDefinitionError(
            f"the MCP server did not finish listing its tools within {timeout:g} s ({pages} "
            f"pages, {len(tools)} tools read); pass from_mcp(..., list_timeout=S)"
        ) from None
    return [_dump(t) for t in tools]


def _visible(prefix: str, name: str, taken: set[str]) -> str:
    """The name the model sees: safe characters, at most 64 of them, unique among ``taken``
    (a short suffix from the server's own name, so it is the same on every listing)."""
    plain = prefix + _UNSAFE.sub("_", name)
    if plain and len(plain) <= 64 and plain not in taken:
        return plain
    suffix = "_" + hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return (plain or "mcp_tool")[: 64 - len(suffix)] + suffix


async def from_mcp(
    client: Any,
    *,
    include: Iterable[str] | None = None,
    prefix: str = "",
    max_tools: int = 1000,
    max_pages: int = 100,
    list_timeout: float | None = 30.0,
    **options: Any,
) -> list[Tool]:
    """The tools of a connected MCP client as agent tools, in the server's order.

    Args:
        client: an entered ``mcp.Client`` (or an initialised ``mcp.ClientSession``).
        include: only these tool names (as the server spells them); all by default.
        prefix: put before each name the model sees (``"weather_"``), to keep two servers'
            tools apart; the server is called with its own name.
        max_tools: refuse a server that lists more tools than this.
        max_pages: refuse a listing longer than this many pages (a cursor that never ends).
        list_timeout: seconds the whole listing may take (None: no limit).
        options: passed to :class:`~agentnb.Tool` (``timeout``, ``sequential``,
            ``max_result_chars``, ``references`` for the documents a ``$ref`` names, ...).
    """
    wanted = None if include is None else set(include)
    tools: list[Tool] = []
    found: set[str] = set()
    taken: set[str] = set()
    for spec in await _listing(client, max_pages, max_tools, list_timeout):
        name = str(spec.get("name", ""))
        if wanted is not None and name not in wanted:
            continue
        found.add(name)
        visible = _visible(prefix, name, taken)
        taken.add(visible)
        try:
            made = Tool(
                _caller(client, name),
                name=visible,
                description=spec.get("description") or "",
                parameters=spec.get("inputSchema") or {"type": "object", "properties": {}},
                **options,
            )
        except ToolDefinitionError as exc:
            raise ToolDefinitionError(
                f"MCP tool {name!r}: {exc} (leave it out with include=[...])"
            ) from None
        made.mcp_name = name  # type: ignore[attr-defined]  # what the server calls it
        tools.append(made)
    if wanted is not None and (missing := wanted - found):
        raise ToolDefinitionError(f"the MCP server has no tool named {sorted(missing)[0]!r}")
    return tools
