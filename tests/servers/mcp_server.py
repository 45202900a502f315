"""A small MCP server for the tests (the official SDK's MCPServer): stdio or streamable HTTP.

python mcp_server.py stdio
python mcp_server.py http PORT      # http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

server = MCPServer("travel-mcp")
CALLS: list[str] = []


@server.tool()
def get_weather(city: str, date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]) -> str:
    """天气预报: 城市某天的天气."""
    return f"{city} {date}: 小雨, 降水概率 0.8" if city == "示例城A" else f"{city} {date}: 晴"


@server.tool()
def convert(amount: float, to: Literal["USD", "EUR"] = "USD") -> dict[str, float | str]:
    """Convert yuan into another currency."""
    rate = {"USD": 0.14, "EUR": 0.13}[to]
    return {"amount": round(amount * rate, 2), "currency": to}


@server.tool()
def record(note: str) -> str:
    """Remember a note; returns how many notes the server holds."""
    CALLS.append(note)
    return f"{len(CALLS)} notes"


@server.tool()
def broken(city: str) -> str:
    """Always fails, on purpose (the model reads the message)."""
    raise ToolError(f"no data for {city}")


@server.tool()
def big_page(size: int) -> str:
    """A web page of ``size`` characters (the tests bound what the model reads)."""
    return "<html>" + "x" * size


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
