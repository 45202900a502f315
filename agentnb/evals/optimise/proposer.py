"""The proposer: any agentnb model, asked to reflect on failed runs and write new texts.

Each proposal is one model call (GEPA's reflection): a system message that says the job and
the reply's shape, and a user message holding a JSON document — the current texts (the
instructions and every tool's description), and the parent's failed runs on the minibatch,
each with its request, the checks that failed and why, its stop reason, its trajectory
(tool calls with their results, shortened) and its answer. The reply is a JSON object::

    {"rationale": "why", "instructions": "the whole new instructions",
     "tools": {"search_flights": "the whole new description"}}

(``instructions`` and ``tools`` may be left out: unchanged). A reply fenced in a code block,
or with prose around the object, is read too; a reply whose code block holds plain text is
taken as the new instructions. A reply that holds no new text is no proposal: the history
says so and shows the reply; it costs no metric call.

Each question is a run of its own (:mod:`.asking`), metered apart from the task runs by its
record: its calls, tokens and spend are the optimisation's ``proposer_*`` figures, never
metric calls.
The stand-in proposer (``an.travel.TravelModel().proposer()``) reads the same request.

A :class:`~agentnb.models.FunctionModel` proposer whose function is sync is called in a worker
thread (:class:`InThread`), as agentnb runs sync tools and checks: a function that blocks holds
its own thread, never the event loop, so the ``timeout`` still ends the wait (and says so), and
the live view and Stop stay responsive. Other models are awaited as they are.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ...models import FunctionModel, ModelRequest, ModelResponse
from ...runtime import in_thread
from ..batches import batches
from .asking import asked
from .candidate import Texts
from .reply import MAX_CHARS, fences, json_objects

if TYPE_CHECKING:
    from ...session import Session
    from ..record import EvalRecord
    from ..tasks import Task
    from .candidate import Candidate
    from .optimisation import Optimisation

__all__ = [
    "REFLECT",
    "InThread",
    "Proposal",
    "Reflection",
    "ask",
    "failure",
    "off_loop",
    "parse_reply",
    "reflection_request",
]

#: The proposer's system message.
REFLECT = """You improve an AI agent by rewriting its instructions and tool descriptions.
The user message is a JSON document: "current" holds the agent's instructions and each tool's
description; "failures" holds runs that failed: the request, the checks that failed and why, the
stop reason, the tool calls with their results, and the answer.
Find what the failures have in common and change the text so the agent does better on such
requests in general, not only on these: never copy a request or an answer into the text.
Change as little as needed; keep what works.
Reply with one JSON object and nothing else:
{"rationale": "what you changed and why", "instructions": "the complete new instructions",
 "tools": {"tool_name": "the complete new description"}}
Leave out "instructions" or "tools" to keep them as they are."""

#: How much of a tool result and of an answer a failure shows.
RESULT_CHARS = 300
ANSWER_CHARS = 600


@dataclass
class Proposal:
    """What a proposer's reply said: new texts (None: no usable proposal) and why."""

    texts: Texts | None
    rationale: str
    #: Why the reply was no proposal, or what was ignored in it ("" when nothing).
    problem: str = ""
    reply: str = ""


@dataclass
class Reflection:
    """What the proposer is shown: the current texts and the failed runs."""

    texts: Texts
    failures: list[dict[str, Any]] = field(default_factory=list)
    #: Runs of the minibatch that passed (shown as a count).
    passed: int = 0

    def document(self) -> dict[str, Any]:
        return {
            "current": self.texts.to_dict(),
            "failures": self.failures,
            "passed_on_this_minibatch": self.passed,
        }


def _short(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure(record: EvalRecord, task: Task, session: Session | None) -> dict[str, Any]:
    """One failed run as the proposer sees it."""
    steps = []
    if session is not None:
        for batch in batches(session.messages):
            for call in batch:
                steps.append(
                    {
                        "tool": call.name,
                        "arguments": call.arguments,
                        "result": _short(call.result, RESULT_CHARS),
                    }
                )
    found = {
        "task": task.name,
        "request": task.input,
        "failed_checks": [{"check": c.name, "why": c.reason} for c in record.failed_checks],
        "error": record.error,
        "stop_reason": record.stop_reason,
        "tool_calls": steps,
        "answer": _short(record.output, ANSWER_CHARS),
    }
    talk = record.conversation  # a task with a user: every turn, the user's words and answers
    if talk is not None:
        found["conversation"] = [{"user": t.text, "rule": t.rule} for t in talk.user]
    return found


def reflection_request(reflection: Reflection) -> ModelRequest:
    """The one request a proposal costs."""
    body = json.dumps(reflection.document(), ensure_ascii=False, indent=1)
    return ModelRequest([{"role": "system", "content": REFLECT}, {"role": "user", "content": body}])


def _shown(value: Any) -> str:
    """A wrong value as the history shows it: its JSON, shortened."""
    return _short(json.dumps(value, ensure_ascii=False), 60)


def parse_reply(reply: str, current: Texts) -> Proposal:
    """The new texts a reply proposes (see the module docstring). Reading it is linear in its
    length, with bounded depth (:func:`.reply.json_objects`)."""
    objects = json_objects(reply)
    if len(reply) > MAX_CHARS:
        return Proposal(None, "", objects.problem, reply[:2000] + "…")
    for obj in objects.found:
        if not {"instructions", "tools"} & obj.keys():
            continue
        rationale = str(obj.get("rationale") or "").strip()
        ignored: list[str] = []
        instructions = obj.get("instructions")
        if instructions is None:
            instructions = current.instructions
        elif not isinstance(instructions, str):
            ignored.append(f"its instructions are not text ({_shown(instructions)})")
            instructions = current.instructions
        elif not instructions.strip():
            ignored.append("its instructions are empty")
            instructions = current.instructions
        tools = dict(current.tools)
        proposed = obj.get("tools")
        if proposed is None:
            proposed = {}
        elif not isinstance(proposed, dict):
            ignored.append(f"its tools are not an object of descriptions ({_shown(proposed)})")
            proposed = {}
        for name, text in proposed.items():
            if name not in tools:
                known = ", ".join(repr(t) for t in tools) or "none"
                ignored.append(f"it describes an unknown tool {name!r} (the tools: {known})")
            elif not isinstance(text, str):
                ignored.append(f"its description of {name!r} is not text ({_shown(text)})")
            elif not text.strip():
                ignored.append(f"its description of {name!r} is empty")
            else:
                tools[name] = text.strip()
        texts = Texts(instructions.strip(), tools)
        if texts.key() == current.key():
            why = f": {'; '.join(ignored)}" if ignored else ""
            return Proposal(None, rationale, f"the reply changes nothing{why}", reply)
        unused = f"ignored what it could not use: {'; '.join(ignored)}" if ignored else ""
        return Proposal(texts, rationale, unused, reply)
    for obj in objects.found:  # an answer that proposes nothing, and says why
        if isinstance(obj.get("rationale"), str) and obj["rationale"].strip():
            why = obj["rationale"].strip()
            return Proposal(None, why, f"no change proposed: {why}", reply)
    blocks = fences(reply)
    plain = [b.strip() for _, _, b in blocks if b.strip() and not b.strip().startswith("{")]
    if plain:
        cut, at = [], 0
        for start, end, _ in blocks:
            cut.append(reply[at:start])
            at = end
        rationale = ("".join(cut) + reply[at:]).strip()
        texts = Texts(plain[0], dict(current.tools))
        if texts.key() == current.key():
            return Proposal(None, rationale, "the reply changes nothing", reply)
        return Proposal(texts, rationale, "read the code block as the new instructions", reply)
    why = "the reply holds no JSON object with instructions or tools, and no code block"
    return Proposal(None, "", f"{why} ({objects.problem})" if objects.problem else why, reply)


class InThread:
    """``model`` (a FunctionModel with a sync function) with each ``complete`` run in a worker
    thread, on an event loop of its own. Waiting for it can be given up (a timeout, Stop): the
    thread is left to finish alone and its late reply is dropped."""

    def __init__(self, model: FunctionModel) -> None:
        self.model = model
        self.name = model.name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        reply: ModelResponse = await in_thread(
            partial(asyncio.run, self.model.complete(request)), _same
        )
        return reply

    def __repr__(self) -> str:
        return f"<{self.model!r} in a worker thread>"


def _same(value: Any) -> Any:
    return value


def off_loop(model: Any) -> Any:
    """The proposer as the optimiser calls it: a FunctionModel with a sync function in a
    worker thread (:class:`InThread`), any other model as it is."""
    if isinstance(model, FunctionModel) and not inspect.iscoroutinefunction(model.fn):
        return InThread(model)
    return model


async def ask(opt: Optimisation, parent: Candidate, batch: list[Task]) -> Proposal | None:
    """Ask the proposer about the parent's failed runs on ``batch``; None when it passed all."""
    failures, passed = [], 0
    for task in batch:
        for repeat in range(opt.repeats):
            record = opt.evaluation.record(parent.id, task, repeat)
            if record.passed:
                passed += 1
            else:
                session = opt.evaluation.kept(record).session
                failures.append(failure(record, task, session))
    if not failures:
        return None
    assert opt.proposer is not None
    request = reflection_request(Reflection(parent.texts, failures, passed))
    opt.current = {"parent": parent.id, "rationale": "", "asking": True}
    opt.emit("proposal", opt.current)
    try:
        async with asyncio.timeout(opt.timeout):
            response = await asked(opt, request)  # a run of its own: its record meters it
    except TimeoutError:
        return Proposal(None, "", f"the proposer did not answer within {opt.timeout:g} s")
    except Exception as exc:
        return Proposal(None, "", f"the proposer failed: {type(exc).__name__}: {exc}")
    reply = response.message.content or ""
    text = reply if isinstance(reply, str) else str(reply)
    try:  # linear and bounded (.reply), in a worker thread; a reply never ends the run
        proposal = await asyncio.to_thread(parse_reply, text, parent.texts)
    except Exception as exc:
        why = f"the reply could not be read: {type(exc).__name__}: {exc}"
        proposal = Proposal(None, "", why)
    opt.current = {"parent": parent.id, "rationale": proposal.rationale, "asking": False}
    opt.emit("proposal", opt.current)
    return proposal
