"""TravelModel: the embedded stand-in for an LLM. No network, no weights.

It reads only the request it is sent, like a model would (:mod:`.reading`): the instructions
and tool descriptions become policy knobs through a cue lexicon (``understood(request)`` shows
them, with the line that set each, and the lines it did not understand); the tool schemas say
which tool does what and how its parameters are named; the user's words and earlier turns give
the trip; this turn's tool results what is known. It then plans (:mod:`.plan`: ask, call the
offered tools, or answer) and writes (:mod:`.answer`, through phrase tables in both languages),
and says why in ``reasoning_content``, naming the rules of ``TravelModel.rules()``.

At ``temperature=0`` it is deterministic. Above 0 it makes the documented slips of
:mod:`.slips`, seeded per call from ``seed`` and the request's messages, so a run reproduces
exactly. ``misbehave=`` reproduces the pitfalls of the articles on purpose (:data:`MISBEHAVIOURS`).

A stay is one night unless the user says otherwise ("住两晚", "2 nights"): article 000's
request names no nights, so the default run totals 880 + 520 × 1 = 1400, and the answer says so.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from datetime import date as Date
from typing import Any

from ...messages import AssistantMessage, ToolCall
from ...models.base import Model, ModelRequest, ModelResponse, Usage
from ...tokens import MESSAGE_OVERHEAD, content_text, estimate_tokens
from ..data import TravelData, load
from ..dates import DEFAULT_TODAY
from .actions import act, user_text
from .answer import compose_answer
from .clarify import answer_style, clarifying_question
from .explain import Reasoning, explain_calls, explain_question
from .gullible import obey
from .observations import fabricated_answer, picks
from .plan import plan
from .reading import Turn, read
from .rules import RuleTable, rule_table
from .slips import MISBEHAVIOURS, roll
from .understood import Understood

__all__ = ["MISBEHAVIOURS", "TravelModel"]


class TravelModel(Model):
    """The default model of the travel assistant (see the module docstring)."""

    def __init__(
        self,
        misbehave: str | None = None,
        *,
        temperature: float = 0.0,
        seed: int = 0,
        explain: bool = True,
        stream: bool = False,
        parallel: bool | None = None,
        data: TravelData | None = None,
        today: Date | str = DEFAULT_TODAY,
    ) -> None:
        if misbehave is not None and misbehave not in MISBEHAVIOURS:
            raise ValueError(
                f"unknown misbehaviour {misbehave!r}; choose one of {', '.join(MISBEHAVIOURS)}"
            )
        if not 0 <= temperature <= 2:
            raise ValueError(f"temperature must be between 0 and 2, not {temperature!r}")
        self.misbehave = misbehave
        self.temperature = float(temperature)
        self.seed = int(seed)
        self.explain = explain
        self.streaming = stream
        self.parallel = parallel
        self.data = data or load()
        #: The reference date for ISO dates (a system message "今天是 YYYY-MM-DD" overrides it).
        self.today = Date.fromisoformat(today) if isinstance(today, str) else today
        self.name = "TravelModel (deterministic stand-in, no LLM)"
        if misbehave:
            self.name += f" misbehave={misbehave}"
        if self.temperature:
            self.name += f" temperature={self.temperature:g} seed={self.seed}"

    def with_seed(self, seed: int) -> TravelModel:
        """A copy with ``seed`` and every other setting equal (``self`` is left as it is)."""
        twin = copy.copy(self)
        twin.seed = int(seed)
        twin.name = self.name.replace(f"seed={self.seed}", f"seed={twin.seed}")
        return twin

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

    # -- read ---------------------------------------------------------------------------
    def read(self, request: ModelRequest) -> Turn:
        """What the model takes from a request (see :mod:`.reading`). Nothing else."""
        return read(request, self.data, today=self.today, parallel=self.parallel,
                    ghost=self.misbehave == "ghost_call")  # fmt: skip

    def understood(self, request: Any, *, instructions: str | None = None,
                   descriptions: dict[str, str] | None = None) -> Understood:  # fmt: skip
        """The knobs ``request`` sets (a ``ModelRequest``, an ``Agent`` — its instructions and
        tool schemas — or an instructions string), each with the line that set it, and the
        lines not understood. Shows as a table in a notebook.

        ``instructions`` and ``descriptions`` (tool name -> text) read a draft instead of what
        the agent has: ``model.understood(agent, instructions=text)`` is what the Playground
        shows as you type."""
        if isinstance(request, str):
            request = ModelRequest([{"role": "system", "content": request}])
        elif not isinstance(request, ModelRequest):  # an Agent
            prompt = request.prompt()
            request = ModelRequest([prompt.system] if prompt.system else [], prompt.tools)
        if instructions is not None or descriptions:
            system = [m for m in request.messages if m.get("role") not in ("system", "developer")]
            text = instructions if instructions is not None else "\n".join(
                content_text(m.get("content")) for m in request.messages
                if m.get("role") in ("system", "developer"))  # fmt: skip
            tools = [copy.deepcopy(t) for t in request.tools or ()]
            for t in tools:
                function = t.get("function") or {}
                if function.get("name") in (descriptions or {}):
                    function["description"] = (descriptions or {})[function["name"]]
            request = ModelRequest([{"role": "system", "content": text}, *system], tools)
        return Understood(self.read(request).policy)

    # -- plan and write -------------------------------------------------------------------
    def reply(self, request: ModelRequest) -> AssistantMessage:
        """The next assistant message for ``request`` (tool calls or the final answer), with
        its reasoning unless ``explain=False``."""
        turn = self.read(request)
        why = Reasoning(turn.request.language)
        slips = roll(self.temperature, self.seed, list(request.messages))
        self._slip_reading(turn, slips)
        if self.misbehave == "gullible":  # follows what tool results say, at its rate
            obey(turn, self.seed, list(request.messages), why.add)
        content, calls = self._decide(turn, why, slips, request)
        reasoning = why.text() if self.explain else None
        if calls:
            return AssistantMessage(content=None, tool_calls=calls, reasoning_content=reasoning)
        return AssistantMessage(content=content, reasoning_content=reasoning)

    def _slip_reading(self, turn: Turn, slips: frozenset[str]) -> None:
        """A slip in what was read: the budget misread (said where the cost call uses it)."""
        req = turn.request
        if "slip_misread_budget" in slips and req.budget is not None:
            turn.misread_budget, req.budget = req.budget, req.budget / 10  # said if it is used

    def _guess(self, turn: Turn, why: Reasoning) -> None:
        """misbehave='guess_args': fill what the user left out with a guess and say nothing to
        the user (001 §6.1): the first city of the data, the other one, today."""
        req, cities = turn.request, [c.name for c in self.data.city_list]
        if not {"flights", "hotels", "weather"} & set(req.wants):
            return
        guessed = []
        if "flights" in req.wants and not req.origin:
            req.origin = next(c for c in cities if c != req.destination)
            guessed.append(req.origin)
        if not req.destination:
            req.destination = next(c for c in cities if c != req.origin)
            guessed.append(req.destination)
        if not req.date:
            req.date = "今天" if req.language == "zh" else "today"
            guessed.append(req.date)
        req.vague = None
        if guessed:
            why.add("misbehave_guess_args", "r_misbehave", mode="guess_args",
                    what=MISBEHAVIOURS["guess_args"] + f": {', '.join(guessed)}")  # fmt: skip

    def _ignore_preference(self, turn: Turn, why: Reasoning) -> None:
        for knob, default in (("flight_choice", "earliest"), ("hotel_choice", "value")):
            how = getattr(turn.policy, knob)
            if how != default:
                why.slip("slip_ignore_preference", self.temperature, knob=knob, how=how)
                setattr(turn.policy, knob, default)

    def _decide(
        self, turn: Turn, why: Reasoning, slips: frozenset[str], request: ModelRequest | None = None
    ) -> tuple[str | None, list[ToolCall]]:
        req, obs, policy, mode = turn.request, turn.observations, turn.policy, self.misbehave
        language = {"zh": "zh", "en": "en"}.get(policy.language, req.language)
        if policy.not_understood and not obs and not turn.calls_so_far:
            line, _ = policy.not_understood[0]
            why.add("not_understood", "r_not_understood", n=len(policy.not_understood), first=line)
        if mode == "guess_args":  # on every reply: the same guesses
            self._guess(turn, why)
        why.date(turn, req.date)
        for role in policy.skip if not obs else ():
            spec = turn.menu.get(role)
            if spec is not None and role in req.wants:
                why.add("skip", "r_skip", what=why.section(role), tool=spec.name)
        shown = replace(req, language=language)
        if req.wants and not obs and (policy.tools == "memory" or (
                mode == "fabricate" and policy.tools != "first")):  # fmt: skip
            rule = "tools" if policy.tools == "memory" else "misbehave_fabricate"
            why.add(rule, "r_memory")
            return fabricated_answer(shown), []
        asked = clarifying_question(turn, language)
        if asked:
            explain_question(turn, why, asked[0])
            return asked[1], []
        assumed = ""
        dated = {"flights", "hotels", "weather"} & set(req.wants)  # each needs a day
        if policy.missing == "assume" and not req.date and dated:
            assumed = policy.assumed_day or ("明天" if req.language == "zh" else "tomorrow")
            req.date = shown.date = assumed
            why.add("missing", "r_assume", day=assumed)
            why.date(turn, assumed)
        offered = bool(turn.menu) and policy.tools != "never"
        steps = plan(turn, self.data, mode, slips) if offered or mode == "hallucinate_tool" else []
        if "slip_ignore_preference" in slips and _choosing(turn, steps):
            self._ignore_preference(turn, why)
            steps = plan(turn, self.data, mode, slips) if steps else []
        if steps and not turn.menu:
            steps = []  # no tools at all in the request (the wrap-up call): nothing to call
        if not steps and request is not None and request.tools and turn.menu:
            steps = act(turn, list(request.tools), user_text(request))  # book, send (asked)
        if not steps:
            return self._answer(turn, shown, why, assumed), []
        new = steps and steps[0][0] not in {o.name for o in obs}
        if "slip_forget_tool" in slips and new and obs:  # answers before the last lookups
            role = next((r for r, spec in turn.menu.specs.items() if spec.name == steps[0][0]), "")
            why.slip("slip_forget_tool", self.temperature, what=why.section(role))
            return self._answer(turn, shown, why, assumed), []
        if not turn.parallel and mode != "mismatched_id":
            steps = steps[:1]
        explain_calls(turn, steps, why, slips, mode, self.temperature)
        tool_calls = []
        for i, (name, args) in enumerate(steps):
            call_id = f"call_{turn.calls_so_far + i}"
            if mode == "mismatched_id" and not obs:
                call_id = "call_0"
            text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            tool_calls.append(ToolCall.make(call_id, name, text))
        return None, tool_calls

    def _answer(self, turn: Turn, shown: Any, why: Reasoning, assumed: str) -> str:
        obs, policy = turn.observations, turn.policy
        unknown = [o.city for o in obs if o.kind == "unknown_city"]
        if unknown:
            why.add("unknown_city", "r_unknown_city", city=unknown[0])
        elif policy.tools == "never" and turn.request.wants:
            why.add("tools", "r_no_tools")
        elif obs:
            used = ", ".join(dict.fromkeys(o.name for o in obs))
            why.add("final_answer", "r_final", used=used)
            why.choices(turn, obs)
            why.total(obs, turn)
        else:
            why.add("final_answer", "r_final_nothing")
        invent = self.misbehave == "ignore_results"
        if invent and obs:
            why.add("misbehave_ignore_results", "r_misbehave", mode="ignore_results",
                    what=MISBEHAVIOURS["ignore_results"])  # fmt: skip
        style = answer_style(turn)
        style.assumed = assumed
        return compose_answer(shown, obs, self.data, invent=invent, style=style)

    def proposer(self) -> Any:
        """The optimiser's offline proposer (:class:`.proposer.TravelProposer`): it reads the
        failed checks of a reflection request and proposes the line of this table's rule
        that explains most of them, worded in the instructions' language."""
        from .proposer import TravelProposer

        return TravelProposer(self.data)

    @staticmethod
    def rules() -> RuleTable:
        """Every rule this stand-in follows (knobs, schemas, reading, decisions, slips,
        pitfalls), each with the article section it comes from. A table in a notebook."""
        return rule_table()

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _choosing(turn: Turn, steps: list[Any]) -> bool:
    """Is this reply where a flight and a hotel get chosen (the first cost call, or the
    answer), and would the choice knobs pick otherwise than the defaults?"""
    cost = turn.menu.get("cost")
    priced = cost is not None and any(o.ok and o.name == cost.name for o in turn.observations)
    first_cost = bool(steps) and cost is not None and steps[0][0] == cost.name and not priced
    if steps and not first_cost:
        return False
    found = {}
    for role in ("flights", "hotels"):
        spec = turn.menu.get(role)
        data = [o.data for o in turn.observations if o.ok and o.data and role in o.data
                and (spec is None or o.name == spec.name)]  # fmt: skip
        found[role] = data[-1] if data else None
    args = (turn.request, found["flights"], found["hotels"])
    chosen = picks(*args, turn.flight_choice, turn.hotel_choice)
    return chosen != picks(*args, "earliest", "value")
