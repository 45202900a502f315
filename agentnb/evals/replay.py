"""A saved run as a regression test: feed its model replies back through today's runtime.

    report = await an.testing.replay(saved_session, agent)    # or a Trace, a RunResult
    report.ok, report.differences
    await an.testing.assert_replays(saved_session, agent)     # AssertionError listing them

The recorded assistant replies are played back in order (a recording of replies keyed by
position: :mod:`agentnb.models.recorded`, the format cassettes and the response cache share),
with the user turns of the recording, through ``agent``'s current runtime, instructions and
tools (live, or ``tools="recorded"`` to answer from the recording). Every difference is
reported: a tool call or result that changed, a message missing or extra, a model call more
or fewer, and — when the recording kept its requests (a live session, a trace) —
instructions, tool schemas or parameters that changed (article 002 §3.4: replay failed
traces before every release).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigurationError
from ..messages import RUNTIME_NAME, parse_message
from ..models import (
    Model,
    ModelRequest,
    ModelResponse,
    Replies,
    by_position,
    changed_paths,
    coerce_response,
    reply_dict,
    reply_of,
)
from ..session import Session
from .normalise import canonical

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["Difference", "ReplayReport", "replay"]


@dataclass(frozen=True)
class Difference:
    """One way the replay differs from the recording."""

    where: str
    what: str
    expected: Any = None
    actual: Any = None

    def __str__(self) -> str:
        return (
            f"{self.where}: {self.what} (recorded {self.expected!r:.160}, now {self.actual!r:.160})"
        )


@dataclass
class ReplayReport:
    """``ok`` when nothing differs; ``differences`` in order; ``session`` is the replay."""

    differences: list[Difference] = field(default_factory=list)
    session: Session | None = None
    model_calls: int = 0

    @property
    def ok(self) -> bool:
        return not self.differences

    def __repr__(self) -> str:
        if self.ok:
            return f"<ReplayReport ok: {self.model_calls} model calls replayed, no difference>"
        lines = "\n".join(f"  {d}" for d in self.differences[:20])
        return f"<ReplayReport {len(self.differences)} differences:\n{lines}>"


class _Replies(Model):
    """The recorded replies, keyed by position (:mod:`agentnb.models.recorded`: the n-th call
    gets the n-th reply); the requests it was sent are kept."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.name = "replay of a recorded run"
        self.replies = Replies(
            entries=(
                {"key": by_position(n), "response": reply_dict(coerce_response(r, self.name))}
                for n, r in enumerate(replies)
            )
        )
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        entry = self.replies.find(by_position(len(self.requests)))
        self.requests.append(request)
        if entry is None:
            raise _Exhausted
        return reply_of(entry["response"])


class _Exhausted(Exception):
    pass


def _source(value: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any]]:
    """(history before the recording, recorded messages, recorded requests) of ``value``."""
    from ..events import MessageAppended, RequestAssembled
    from ..storage import Trace

    if isinstance(value, Session):
        return [], value.to_openai(), [record.request for record in value.requests]
    events = getattr(value, "events", None)
    if isinstance(value, Trace) or events is not None:
        events = list(value.events if events is not None else value)
        messages = [e.message.to_openai() for e in events if isinstance(e, MessageAppended)]
        requests = [e.request for e in events if isinstance(e, RequestAssembled)]
        first = next((i for i, e in enumerate(events) if isinstance(e, RequestAssembled)), None)
        prior: list[dict[str, Any]] = []
        if first is not None:
            before = sum(isinstance(e, MessageAppended) for e in events[:first])
            sent = [m for m in requests[0].messages if m.get("role") not in ("system", "developer")]
            prior = [dict(m) for m in sent[: len(sent) - before]]
        return prior, messages, requests
    if isinstance(value, list):
        return [], [m if isinstance(m, dict) else m.to_openai() for m in value], []
    raise ConfigurationError(f"replay() reads a Session, Trace or RunResult, not {value!r}")


def _is_input(m: dict[str, Any]) -> bool:
    return m.get("role") == "user" and m.get("name") != RUNTIME_NAME


def _shape(m: dict[str, Any]) -> dict[str, Any]:
    """What a message difference compares: role, text, calls (canonical), call id, name."""
    calls = [
        (c["id"], c["function"]["name"], canonical(c["function"]["arguments"]))
        for c in m.get("tool_calls") or ()
    ]
    content = m.get("content")
    text = content if isinstance(content, str) or content is None else json.dumps(content)
    return {
        "role": m.get("role"),
        "content": text or None,
        "tool_calls": calls,
        "tool_call_id": m.get("tool_call_id"),
    }


def _compare_messages(
    expected: list[dict[str, Any]], actual: list[dict[str, Any]]
) -> list[Difference]:
    out = []
    for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
        se, sa = _shape(e), _shape(a)
        for key in ("role", "tool_calls", "tool_call_id", "content"):
            if se[key] != sa[key]:
                what = {
                    "tool_calls": "tool calls changed",
                    "content": f"{se['role']} content changed",
                }.get(key, f"{key} changed")
                out.append(Difference(f"message {i}", what, se[key], sa[key]))
    for i in range(len(actual), len(expected)):
        out.append(Difference(f"message {i}", "missing in the replay", _shape(expected[i]), None))
    for i in range(len(expected), len(actual)):
        out.append(Difference(f"message {i}", "extra in the replay", None, _shape(actual[i])))
    return out


def _compare_requests(recorded: list[Any], sent: list[ModelRequest]) -> list[Difference]:
    out = []
    for i, (r, s) in enumerate(zip(recorded, sent, strict=False)):
        head_r = [m.get("content") for m in r.messages if m.get("role") in ("system", "developer")]
        head_s = [m.get("content") for m in s.messages if m.get("role") in ("system", "developer")]
        if head_r != head_s:
            out.append(Difference(f"request {i}", "instructions changed", head_r, head_s))
        out += _tool_changes(f"request {i}", r.tools or [], s.tools or [])
        if dict(r.params) != dict(s.params):
            out.append(Difference(f"request {i}", "parameters changed", r.params, s.params))
    return out


def _tool_changes(where: str, then: list[Any], now: list[Any]) -> list[Difference]:
    """Which tool changed and how: added, removed, its description (before / after) or which
    part of its parameters (the JSON paths)."""
    if then == now:
        return []
    a = {t["function"]["name"]: t["function"] for t in then}
    b = {t["function"]["name"]: t["function"] for t in now}
    out = []
    for name in dict.fromkeys([*a, *b]):
        if name not in b:
            out.append(Difference(where, f"tool {name} removed", name, None))
        elif name not in a:
            out.append(Difference(where, f"tool {name} added", None, name))
        elif a[name] != b[name]:
            if a[name].get("description") != b[name].get("description"):
                what = f"tool {name}: description changed"
                out.append(
                    Difference(where, what, a[name].get("description"), b[name].get("description"))
                )
            paths = changed_paths(a[name].get("parameters"), b[name].get("parameters"))
            if paths:
                what = f"tool {name}: parameters changed at {', '.join(paths[:6])}"
                out.append(
                    Difference(where, what, a[name].get("parameters"), b[name].get("parameters"))
                )
    if not out:  # the same tools in another order
        out.append(Difference(where, "tool order changed", list(a), list(b)))
    return out


async def replay(
    recorded: Any, agent: Agent, *, tools: Literal["live", "recorded"] = "live"
) -> ReplayReport:
    """Replay ``recorded`` (a Session, Trace or RunResult) through ``agent``; see the module."""
    prior, messages, requests = _source(recorded)
    replies = [m for m in messages if m.get("role") == "assistant"]
    model = _Replies(replies)
    if tools == "recorded":
        from .recording import ToolRecording

        agent = agent.replaying(ToolRecording.from_sessions([prior + messages]))
    runner = agent.copy(model=model)
    session = Session(prior)
    report = ReplayReport(session=session)
    turns = [i for i, m in enumerate(messages) if _is_input(m)] or [0]
    for n, start in enumerate(turns):
        first = messages[start] if messages and _is_input(messages[start]) else None
        try:
            await runner.run(parse_message(first) if first else None, session=session)
        except _Exhausted:
            why = "the runtime asked for more model calls than were recorded"
            report.differences.append(Difference(f"turn {n}", why, len(replies), None))
            break
        except Exception as exc:
            report.differences.append(Difference(f"turn {n}", "the replay raised", None, repr(exc)))
            break
    report.model_calls = min(len(model.requests), len(replies))
    actual = session.to_openai()[len(prior) :]
    report.differences += _compare_messages(messages, actual)
    report.differences += _compare_requests(requests, model.requests)
    if len(model.requests) < len(replies):
        report.differences.append(
            Difference(
                "model calls", "fewer model calls than recorded", len(replies), len(model.requests)
            )
        )
    return report
