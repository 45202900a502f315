"""TravelModel: the embedded, deterministic stand-in for an LLM. No network, no weights.

It reads only the request it is sent, like a model would: the user's words and earlier turns
(``request.messages``), the tool results of this turn, the system message's *instruction
cues* (:mod:`.cues`), the offered tools' schemas (``request.tools``, :mod:`.schemas`) and
``request.params`` (``parallel_tool_calls``). It calls only offered tools, with their
parameter names and date format; plans one call per reply as in article 000's table, or
several at once as in article 001; asks when a date or a need is unclear; and writes a final
answer shaped by the output rules (000 §6). It is rules, not intelligence: a fixed, documented
baseline (``TravelModel.rules()``) that makes every stage of the loop reproducible.

A stay is one night unless the user says otherwise ("住两晚", "2 nights"): article 000's
request names no nights, so the default run totals 880 + 520 × 1 = 1400, and the answer says
so ("未说明住几晚，按 1 晚计").

``misbehave=`` reproduces the pitfalls of the articles on purpose (see :data:`MISBEHAVIOURS`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import date as Date
from typing import Any

from ..context.memory import MEMORY_NAME
from ..messages import AssistantMessage, ToolCall
from ..models.base import Model, ModelRequest, ModelResponse, Usage
from ..tokens import MESSAGE_OVERHEAD, estimate_tokens
from .answer import compose_answer
from .clarify import answer_style, clarifying_question
from .cues import read_cues
from .data import TravelData, load
from .dates import DEFAULT_TODAY
from .intent import parse_request
from .observations import Observation, fabricated_answer
from .plan import Turn, plan
from .rules import RuleTable, rule_table
from .schemas import read_menu

__all__ = ["MISBEHAVIOURS", "TravelModel"]

#: Each mode reproduces one pitfall of the source articles.
MISBEHAVIOURS = {
    "loop": "repeats the same search_flights call instead of moving on (000 §5.1, 002 §5.1)",
    "hallucinate_tool": "first calls book_flight, a tool that does not exist (002 §2.4)",
    "wrong_args": "calls search_flights with from_city/to_city instead of departure/destination "
    "(or the other way round when the schema renamed them) (000 §4.3)",
    "malformed_json": "sends its first call's arguments as broken JSON (002 §5.3)",
    "ignore_results": "calls the tools, then answers with figures they never returned (001 §6.1)",
    "fabricate": "answers at once with invented data unless the instructions demand tools "
    "first (000 §2.3)",
    "ghost_call": "also calls search_hotels because earlier history mentioned hotels (000 §5.4)",
    "mismatched_id": "gives two calls in one reply the same id (001 §6.1)",
}


class TravelModel(Model):
    """The default model of the travel assistant (deterministic; see the module docstring)."""

    def __init__(
        self,
        misbehave: str | None = None,
        *,
        stream: bool = False,
        parallel: bool | None = None,
        data: TravelData | None = None,
        today: Date | str = DEFAULT_TODAY,
    ) -> None:
        if misbehave is not None and misbehave not in MISBEHAVIOURS:
            raise ValueError(
                f"unknown misbehaviour {misbehave!r}; choose one of {', '.join(MISBEHAVIOURS)}"
            )
        self.misbehave = misbehave
        self.streaming = stream
        self.parallel = parallel
        self.data = data or load()
        #: The reference date for ISO dates (a system message "今天是 YYYY-MM-DD" overrides it).
        self.today = Date.fromisoformat(today) if isinstance(today, str) else today
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

    # -- reading the request ----------------------------------------------------------------
    def read(self, request: ModelRequest) -> Turn:
        """What the model takes from a request: the user's words (with earlier turns, and the
        marked memory messages as the oldest of them), this turn's tool results, the
        instruction cues and the offered tools. Nothing else."""
        messages = request.messages
        users = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and m.get("name") not in ("agentnb", MEMORY_NAME)
        ]
        last = users[-1] if users else -1
        texts = [_text(messages[i]) for i in users]
        parsed = [parse_request(t, self.data) for t in texts] or [parse_request("", self.data)]
        # Carried facts and recalled memory: the oldest earlier turns, for slots only (002 §2.2)
        noted = [replace(parse_request(t, self.data), wants=[], compare=False)
                 for t in _memory_notes(messages)]  # fmt: skip
        current = parsed[-1].filled_from(noted + parsed[:-1])
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
        system = "\n".join(_text(m) for m in messages if m.get("role") in ("system", "developer"))
        cues = read_cues(system)
        menu = read_menu(list(request.tools or ()))
        parallel = (
            self.parallel
            if self.parallel is not None
            else bool(request.params.get("parallel_tool_calls"))
        )
        today = Date.fromisoformat(cues.today) if cues.today else self.today
        turn = Turn(current, observations, cues, menu, parallel, n_calls, today)
        wrap_up = not menu and observations  # tools switched off after max_iterations
        turn.missing = [] if wrap_up else [w for w in current.wants if menu.get(w) is None]
        return turn

    # -- deciding ---------------------------------------------------------------------------
    def reply(self, request: ModelRequest) -> AssistantMessage:
        """The next assistant message for ``request`` (tool calls or the final answer)."""
        turn = self.read(request)
        req, obs, cues, mode = turn.request, turn.observations, turn.cues, self.misbehave
        language = cues.language or req.language
        shown = replace(req, language=language)
        if mode == "fabricate" and not obs and "tools_first" not in cues and req.wants:
            return AssistantMessage(content=fabricated_answer(shown))
        question = clarifying_question(req, obs, language)
        if question:
            return AssistantMessage(content=question)
        offered = bool(turn.menu) and "no_tools" not in cues
        steps = plan(turn, self.data, mode) if offered or mode == "hallucinate_tool" else []
        if steps and not turn.menu:
            steps = []  # no tools at all in the request (the wrap-up call): nothing to call
        if not steps:
            answer = compose_answer(shown, obs, self.data, invent=mode == "ignore_results",
                                    style=answer_style(turn))  # fmt: skip
            return AssistantMessage(content=answer)
        if not turn.parallel and mode != "mismatched_id":
            steps = steps[:1]
        tool_calls = []
        for i, (name, args) in enumerate(steps):
            call_id = f"call_{turn.calls_so_far + i}"
            if mode == "mismatched_id" and not obs:
                call_id = "call_0"
            text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            tool_calls.append(ToolCall.make(call_id, name, text))
        return AssistantMessage(content=None, tool_calls=tool_calls)

    @staticmethod
    def rules() -> RuleTable:
        """The documented rules this stand-in follows (instruction cues, schemas, reading),
        each with the article section it comes from. Shows as a table in a notebook."""
        return rule_table()

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _memory_notes(messages: list[dict[str, Any]]) -> list[str]:
    """The items of the marked memory messages (``session.fresh(carry=…)``, ``an.Memory``), in
    order: "- 出发地：上海", "- (fact) 常住上海". Recalled tool results are left out: they are
    what a tool said once, not what the user asked."""
    notes = []
    for m in messages:
        if m.get("role") not in ("system", "user") or m.get("name") != MEMORY_NAME:
            continue
        for line in _text(m).splitlines():
            item = re.match(r"\s*-\s*(?:\((\w+)\)\s*)?(.+)", line)
            if item and item.group(1) != "tool_result":
                notes.append(item.group(2))
    return notes


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
