"""TravelModel: the embedded, deterministic stand-in for an LLM. No network, no weights.

It reads the conversation like a model would (the user's request, earlier turns, tool
results), plans the next tool calls - one per reply as in article 000's table, or several
at once when the request says ``parallel_tool_calls=True`` as in article 001 - and writes a
final answer citing flight, times, price, weather, hotel and a budget verdict. It says
when data is missing instead of inventing it. It is rules, not intelligence: a fixed,
inspectable baseline that makes every stage of the loop reproducible.

``misbehave=`` reproduces the pitfalls of the articles on purpose (see :data:`MISBEHAVIOURS`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..messages import AssistantMessage, ToolCall
from ..models.base import Model, ModelRequest, ModelResponse, Usage
from ..tokens import MESSAGE_OVERHEAD, estimate_tokens
from .answer import Observation, choose_flight, choose_hotel, compose_answer
from .data import TravelData, load
from .intent import TripRequest, parse_request
from .observations import fabricated_answer

__all__ = ["MISBEHAVIOURS", "TravelModel"]

#: Each mode reproduces one pitfall of the source articles.
MISBEHAVIOURS = {
    "loop": "repeats the same search_flights call instead of moving on (000 §5.1, 002 §5.1)",
    "hallucinate_tool": "first calls book_flight, a tool that does not exist (002 §2.4)",
    "wrong_args": "calls search_flights with from_city/to_city instead of departure/destination "
    "(000 §4.3)",
    "malformed_json": "sends its first call's arguments as broken JSON (002 §5.3)",
    "ignore_results": "calls the tools, then answers with figures they never returned (001 §6.1)",
    "fabricate": "answers at once with invented data when the instructions allow it (000 §2.3)",
    "ghost_call": "also calls search_hotels because earlier history mentioned hotels (000 §5.4)",
    "mismatched_id": "gives two calls in one reply the same id (001 §6.1)",
}
_TOOL_RULE = re.compile(r"必须使用工具|must use (?:the )?tools", re.IGNORECASE)
_FIXABLE = {"invalid_json", "invalid_arguments"}  # agentnb.ERROR_KINDS a retry can fix


@dataclass
class _Turn:
    request: TripRequest
    observations: list[Observation]
    system: str
    tools: set[str]
    parallel: bool
    calls_so_far: int


class TravelModel(Model):
    """The default model of the travel assistant (deterministic; see the module docstring)."""

    def __init__(
        self,
        misbehave: str | None = None,
        *,
        stream: bool = False,
        parallel: bool | None = None,
        data: TravelData | None = None,
    ) -> None:
        if misbehave is not None and misbehave not in MISBEHAVIOURS:
            raise ValueError(
                f"unknown misbehaviour {misbehave!r}; choose one of {', '.join(MISBEHAVIOURS)}"
            )
        self.misbehave = misbehave
        self.streaming = stream
        self.parallel = parallel
        self.data = data or load()
        self.name = "TravelModel (deterministic stand-in, no LLM)"
        if misbehave:
            self.name += f" misbehave={misbehave}"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        message = self.reply(request)
        prompt = sum(MESSAGE_OVERHEAD + estimate_tokens(json.dumps(m, ensure_ascii=False))
                     for m in request.messages)  # fmt: skip
        if request.tools:
            prompt += estimate_tokens(json.dumps(request.tools, ensure_ascii=False))
        completion = message.tokens
        usage = Usage(prompt, completion, prompt + completion, estimated=True)
        finish = "tool_calls" if message.tool_calls else "stop"
        return ModelResponse(message, usage, finish, self.name)

    # -- reading the conversation ---------------------------------------------------------
    def _read(self, request: ModelRequest) -> _Turn:
        messages = request.messages
        users = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and m.get("name") != "agentnb"
        ]
        last = users[-1] if users else -1
        texts = [_text(messages[i]) for i in users]
        parsed = [parse_request(t, self.data) for t in texts] or [parse_request("", self.data)]
        current = parsed[-1].filled_from(parsed[:-1])
        mentioned_hotels = any("hotels" in p.wants for p in parsed[:-1])
        ghost = self.misbehave == "ghost_call" and mentioned_hotels and current.destination
        if ghost and "hotels" not in current.wants:
            current.wants.append("hotels")  # the history leaks into this turn
        calls: dict[str, tuple[str, str]] = {}
        observations: list[Observation] = []
        n_calls = sum(len(m.get("tool_calls") or ()) for m in messages)
        for m in messages[last + 1 :]:
            for c in m.get("tool_calls") or ():
                calls[c["id"]] = (c["function"]["name"], c["function"]["arguments"])
            if m.get("role") == "tool":
                name, raw = calls.get(m.get("tool_call_id", ""), (m.get("name") or "?", ""))
                observations.append(Observation.read(name, raw, _text(m)))
        system = " ".join(_text(m) for m in messages if m.get("role") in ("system", "developer"))
        tools = {t["function"]["name"] for t in request.tools}
        parallel = (
            self.parallel
            if self.parallel is not None
            else bool(request.params.get("parallel_tool_calls"))
        )
        return _Turn(current, observations, system, tools, parallel, n_calls)

    # -- deciding ---------------------------------------------------------------------------
    def reply(self, request: ModelRequest) -> AssistantMessage:
        """The next assistant message for ``request`` (tool calls or the final answer)."""
        turn = self._read(request)
        req, obs = turn.request, turn.observations
        mode = self.misbehave
        if mode == "fabricate" and not obs and not _TOOL_RULE.search(turn.system) and req.wants:
            return AssistantMessage(content=fabricated_answer(req))
        steps = self._plan(turn) if turn.tools else []
        if not steps:
            answer = compose_answer(req, obs, self.data, invent=mode == "ignore_results")
            return AssistantMessage(content=answer)
        if not turn.parallel and mode != "mismatched_id":
            steps = steps[:1]
        calls = []
        for i, (name, args) in enumerate(steps):
            call_id = f"call_{turn.calls_so_far + i}"
            if mode == "mismatched_id" and not obs:
                call_id = "call_0"
            text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            calls.append(ToolCall.make(call_id, name, text))
        return AssistantMessage(content=None, tool_calls=calls)

    def _plan(self, turn: _Turn) -> list[tuple[str, dict[str, Any] | str]]:
        req, obs, mode = turn.request, turn.observations, self.misbehave
        steps: list[tuple[str, dict[str, Any] | str]] = []
        unknown = {o.city for o in obs if o.kind == "unknown_city"}
        if req.destination in unknown or req.origin in unknown:
            return []  # a city the data does not have: nothing more to look up
        if req.language == "en":  # the tools take English names too
            req = _english_names(req, self.data)
        date = req.date or ("today" if req.language == "en" else "今天")
        hallucinating = mode == "hallucinate_tool" and "book_flight" not in {o.name for o in obs}
        if hallucinating and ("flights" in req.wants or "hotels" in req.wants):
            return [("book_flight", {"destination": req.destination or "", "date": date})]
        if "flights" in req.wants and req.origin and req.destination:
            args: dict[str, Any] = {
                "departure": req.origin,
                "destination": req.destination,
                "date": date,
            }
            flights = [o for o in obs if o.name == "search_flights"]
            if mode == "loop" and any(o.ok for o in flights):
                return [("search_flights", args)]
            if _needed(flights):
                if mode == "wrong_args" and not flights:
                    args = {"from_city": req.origin, "to_city": req.destination, "date": date}
                if mode == "malformed_json" and not obs:
                    steps.append(("search_flights", json.dumps(args, ensure_ascii=False)[:-9]))
                else:
                    steps.append(("search_flights", args))
        if "weather" in req.wants and req.destination:
            weather = _of(obs, "search_weather")
            for day in dict.fromkeys(req.dates) if len(req.dates) > 1 else [date]:
                asked = [o for o in weather if (o.arguments or {}).get("date") == day]
                if _needed(asked if len(req.dates) > 1 else weather):
                    steps.append(("search_weather", {"city": req.destination, "date": day}))
        if "hotels" in req.wants and req.destination and _needed(_of(obs, "search_hotels")):
            hotel: dict[str, Any] = {"city": req.destination, "check_in_date": date}
            if req.nights != 1:
                hotel["nights"] = req.nights
            if req.near:
                hotel["near"] = req.near
            steps.append(("search_hotels", hotel))
        if steps or "cost" not in req.wants:
            return steps
        return self._cost_step(req, obs)

    def _cost_step(self, req: TripRequest, obs: list[Observation]) -> list[tuple[str, Any]]:
        costs = [o for o in obs if o.name == "calculate_cost"]
        flights = _latest_ok(obs, "search_flights")
        hotels = _latest_ok(obs, "search_hotels")
        flight, cheap_flight = choose_flight(flights)
        hotel, cheap_hotel = choose_hotel(hotels, req)
        ok = [o for o in costs if o.ok]
        if not ok:  # first cost call (or its one retry)
            items = _items(flight, hotel, req)
            return [("calculate_cost", _cost_args(items, req))] if items and _needed(costs) else []
        over = (ok[0].data or {}).get("within_budget") is False
        alt = _items(cheap_flight, cheap_hotel, req)
        if over and len(ok) == 1 and alt and alt != _items(flight, hotel, req):
            return [("calculate_cost", _cost_args(alt, req))]  # offer the cheapest combination
        return []

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _english_names(req: TripRequest, data: TravelData) -> TripRequest:
    from dataclasses import replace

    def en(name: str | None) -> str | None:
        return data.city(name).name_en if name and data.resolve_city(name) == name else name

    return replace(req, origin=en(req.origin), destination=en(req.destination))


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _of(obs: list[Observation], name: str) -> list[Observation]:
    return [o for o in obs if o.name == name]


def _latest_ok(obs: list[Observation], name: str) -> dict[str, Any] | None:
    found = [o.data for o in obs if o.name == name and o.ok and o.data]
    return found[-1] if found else None


def _needed(done: list[Observation]) -> bool:
    """Call this tool (again)? Once, plus one retry for a retryable or fixable failure."""
    if not done:
        return True
    if any(o.ok for o in done):
        return False
    last = done[-1]
    return len(done) == 1 and (last.retryable or last.kind in _FIXABLE)


def _items(
    flight: dict[str, Any] | None, hotel: dict[str, Any] | None, req: TripRequest
) -> list[dict[str, Any]]:
    items = []
    if flight:
        label = (
            f"机票 {flight['flight_no']}"
            if req.language == "zh"
            else f"flight {flight['flight_no']}"
        )
        items.append({"label": label, "unit_price": flight["price"], "quantity": 1})
    if hotel:
        nights = int(hotel.get("nights") or req.nights)
        per_night, total = hotel["price_per_night"], hotel["total_price"]
        label = f"酒店 {hotel['name']}" if req.language == "zh" else f"hotel {hotel['name_en']}"
        if per_night * nights == total:
            items.append({"label": label, "unit_price": per_night, "quantity": nights})
        else:
            items.append({"label": f"{label} ({nights})", "unit_price": total, "quantity": 1})
    return items


def _cost_args(items: list[dict[str, Any]], req: TripRequest) -> dict[str, Any]:
    args: dict[str, Any] = {"items": items}
    if req.budget is not None:
        args["budget"] = req.budget
    return args
