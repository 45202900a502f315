"""The multi-turn shape for ``make bench``: a large catalogue, a session growing turn by turn.

24 async tools (as the core rows' tools) with large schemas: 12 from Python signatures
validated by pydantic, 12 given as JSON schemas validated by ``jsonschema``. One session of
12 turns: each turn a user message, then 3 model replies of 3 tool calls each (a batch), then
an answer, so the session grows by 14 messages a turn, to 169. The model reads
``request.messages`` (back to the user's question) and ``request.tools``, and its replies are
parsed from JSON text, as a client's are. A plain executor does the same calls on a list of
dicts (``json.loads`` the arguments, await the function, ``json.dumps`` the result): no
validation, no events.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

import agentnb as an
from agentnb.models import FunctionModel

TOOLS = 24
TURNS = 12
BATCHES = 3  # model replies with tool calls per turn
BATCH = 3  # calls per reply
CALLS_PER_RUN = TURNS * BATCHES * BATCH  # tool calls in one session

_CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "西安", "南京"]


class Filters(BaseModel):
    """Narrowing a search."""

    min_price: Annotated[int, Field(ge=0, description="lowest price in yuan, inclusive")] = 0
    max_price: Annotated[int, Field(ge=0, description="highest price in yuan, inclusive")] = 99999
    stars: Annotated[list[int], Field(description="hotel stars wanted, 1 to 5")] = []
    refundable: Annotated[bool, Field(description="only refundable offers")] = False
    tags: Annotated[list[str], Field(description="free-text tags the offer must carry")] = []


Sort = Literal["price", "rating", "distance", "departure", "duration"]


def _signature_tool(i: int) -> an.Tool:
    async def search(
        city: Annotated[str, Field(description="the city to search in, e.g. 北京 or 上海")],
        date: Annotated[str, Field(description="the day, as YYYY-MM-DD")],
        nights: Annotated[int, Field(ge=1, le=30, description="how many nights")] = 1,
        guests: Annotated[int, Field(ge=1, le=9, description="how many travellers")] = 1,
        sort: Annotated[Sort, Field(description="how the results are ordered")] = "price",
        filters: Annotated[Filters | None, Field(description="narrowing filters")] = None,
        language: Annotated[str, Field(description="the answer's language code")] = "zh",
        currency: Annotated[str, Field(description="ISO 4217 currency of prices")] = "CNY",
        limit: Annotated[int, Field(ge=1, le=50, description="how many results at most")] = 5,
        note: Annotated[str, Field(description="anything else the user asked for")] = "",
    ) -> dict[str, Any]:
        return {
            "tool": i,
            "city": city,
            "date": date,
            "results": [{"id": n, "price": 300 + 10 * n} for n in range(3)],
            "sorted_by": sort,
        }

    search.__name__ = f"search_{i:02d}"
    search.__doc__ = f"Search offers of kind {i} in a city on a day, with filters and sorting."
    return an.tool(search)


def _schema(i: int) -> dict[str, Any]:
    text = {"type": "string", "minLength": 1, "maxLength": 200}
    return {
        "type": "object",
        "properties": {
            "city": {**text, "description": "the city to search in, e.g. 北京 or 上海"},
            "date": {"type": "string", "format": "date", "description": "the day, YYYY-MM-DD"},
            "nights": {"type": "integer", "minimum": 1, "maximum": 30},
            "guests": {"type": "integer", "minimum": 1, "maximum": 9},
            "sort": {"enum": ["price", "rating", "distance", "departure", "duration"]},
            "filters": {
                "type": "object",
                "properties": {
                    "min_price": {"type": "integer", "minimum": 0},
                    "max_price": {"type": "integer", "minimum": 0},
                    "stars": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 1, "maximum": 5},
                    },
                    "refundable": {"type": "boolean"},
                    "tags": {"type": "array", "items": text, "maxItems": 10},
                },
                "additionalProperties": False,
            },
            "language": {**text, "description": "the answer's language code"},
            "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "note": {**text, "minLength": 0, "description": f"anything else for kind {i}"},
        },
        "required": ["city", "date"],
        "additionalProperties": False,
    }


def _schema_tool(i: int) -> an.Tool:
    async def book(**arguments: Any) -> dict[str, Any]:
        return {"tool": i, "booked": arguments["city"], "reference": f"R{i:02d}-0001"}

    book.__name__ = f"book_{i:02d}"
    return an.tool(book, parameters=_schema(i), description=f"Book an offer of kind {i}.")


def tools() -> list[an.Tool]:
    half = TOOLS // 2
    return [_signature_tool(i) for i in range(half)] + [_schema_tool(i) for i in range(half)]


def _arguments(n: int) -> dict[str, Any]:
    return {
        "city": _CITIES[n % len(_CITIES)],
        "date": f"2025-01-{10 + n % 15:02d}",
        "nights": 1 + n % 3,
        "guests": 2,
        "sort": "price",
        "filters": {
            "min_price": 100,
            "max_price": 3000,
            "stars": [3, 4],
            "refundable": True,
            "tags": ["近地铁", "含早"],
        },
        "language": "zh",
        "currency": "CNY",
        "limit": 5,
        "note": "安静的房间",
    }


def names() -> list[str]:
    half = TOOLS // 2
    return [f"search_{i:02d}" for i in range(half)] + [f"book_{i:02d}" for i in range(half)]


def called_names() -> list[str]:
    """The tools one turn calls, in order."""
    all_names = names()
    return [all_names[(7 * n) % TOOLS] for n in range(BATCHES * BATCH)]


def replies() -> list[str]:
    """Each turn's replies, as JSON text: BATCHES replies of BATCH calls, then the answer."""
    out = []
    all_names = names()
    for b in range(BATCHES):
        calls = []
        for k in range(BATCH):
            n = b * BATCH + k
            arguments = json.dumps(_arguments(n), ensure_ascii=False)
            name = all_names[(7 * n) % TOOLS]
            function = {"name": name, "arguments": arguments}
            calls.append({"id": f"call_{b}_{k}", "type": "function", "function": function})
        out.append(json.dumps({"role": "assistant", "content": None, "tool_calls": calls}))
    out.append(
        json.dumps({"role": "assistant", "content": "都查好了：三家酒店，已为您预订第一家。"})
    )
    return out


def _turn_step(messages: Any) -> int:
    """Which reply of the turn comes next: the tool results since the user's question / BATCH."""
    k, results = len(messages) - 1, 0
    while messages[k]["role"] != "user":
        results += messages[k]["role"] == "tool"
        k -= 1
    return results // BATCH


def make_agent() -> an.Agent:
    texts = replies()

    def respond(request: Any) -> Any:
        assert len(request.tools) == TOOLS
        return json.loads(texts[_turn_step(request.messages)])

    return an.Agent("你是差旅助手。", tools(), model=FunctionModel(respond), max_iterations=8)


async def agentnb_session(agent: an.Agent) -> None:
    session = an.Session()
    for turn in range(TURNS):
        result = await agent.run(f"第 {turn} 个问题：帮我查查并订好。", session=session)
        assert result.stop_reason == "final_answer", result


# -- the plain executor of the same calls ------------------------------------------------------
def _functions() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tool in tools():
        out[tool.name] = tool.fn
    return out


FUNCTIONS = _functions()
_TEXTS = replies()


async def bare_session() -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "你是差旅助手。"}]
    for turn in range(TURNS):
        messages.append({"role": "user", "content": f"第 {turn} 个问题：帮我查查并订好。"})
        while True:
            reply = json.loads(_TEXTS[_turn_step(messages)])
            messages.append(reply)
            calls = reply.get("tool_calls")
            if not calls:
                break
            for call in calls:
                fn = FUNCTIONS[call["function"]["name"]]
                result = await fn(**json.loads(call["function"]["arguments"]))
                content = json.dumps(result, ensure_ascii=False)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
