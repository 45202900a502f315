"""What a variant sent: its instructions and tool descriptions as the model received them.

A variant is what the model saw (DESIGN invariant 11). ``ev.compare(a, b).prompt_diff`` (and
the Playground's and the optimiser's comparisons, which are ``compare``'s) diffs the texts
each variant's runs actually sent, read from the requests they made, never from the agent
they were made from: a description a task's tools did not carry, or an instruction a setup
rewrote, shows as the model got it. For each variant, in the sweep's order (repeat, then
task): the instructions of its first request, and each tool's description in the first
request that offered that tool (tasks may give different tools). A request is read from the
run's session (``session.requests``), else from its kept trace (a loaded evaluation); a
variant none of whose runs sent a request is read as it was made (``ev.descriptions``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..events import RequestAssembled
from ..models import line_diff
from ..tokens import content_text

if TYPE_CHECKING:
    from .evaluation import Evaluation
    from .record import EvalRecord

__all__ = ["prompt_diff", "sent_texts"]


def sent_texts(ev: Evaluation, variant: str) -> dict[str, Any] | None:
    """``{"instructions": text, "tools": {name: description}}`` as ``variant``'s runs sent
    them (see the module docstring); None when none of its runs sent a request."""
    instructions: str | None = None
    tools: dict[str, str] = {}
    for request in _first_requests(ev, variant):
        if instructions is None:
            instructions = _instructions(request.messages)
        for schema in request.tools or ():
            function = schema.get("function") or {}
            tools.setdefault(str(function.get("name")), str(function.get("description") or ""))
    return None if instructions is None else {"instructions": instructions, "tools": tools}


def _first_requests(ev: Evaluation, variant: str) -> Iterator[Any]:
    """The first request of each of ``variant``'s runs, in the sweep's order."""
    order = {name: i for i, name in enumerate(ev.tasks.names)}
    rows = sorted(
        (r for r in ev.records if r.variant == variant),
        key=lambda r: (r.repeat, order.get(r.task, len(order))),
    )
    for row in rows:
        request = _first_request(ev, row)
        if request is not None:
            yield request


def _first_request(ev: Evaluation, row: EvalRecord) -> Any:
    session, trace, _ = ev.kept(row)
    session = session if session is not None else row.session
    if session is not None and session.requests:
        return session.requests[0].request
    for event in trace or ():
        if isinstance(event, RequestAssembled):
            return event.request
    return None


def _instructions(messages: list[dict[str, Any]]) -> str:
    """The text of the system (or developer) messages a request starts with."""
    head = []
    for message in messages:
        if message.get("role") not in ("system", "developer"):
            break
        head.append(content_text(message.get("content")))
    return "\n".join(head)


def prompt_diff(ev: Evaluation, a: str, b: str) -> dict[str, Any]:
    """The line diffs of variants ``a`` and ``b``'s instructions and tool descriptions as
    they sent them: ``{"instructions": rows, "tools": {name: rows}}`` of
    :func:`agentnb.models.differ.line_diff`, only what changed (empty when nothing did)."""
    before, after = (sent_texts(ev, v) or ev.descriptions.get(v) for v in (a, b))
    if not before or not after:
        return {}
    out: dict[str, Any] = {}
    instructions = line_diff(before.get("instructions"), after.get("instructions"))
    if instructions:
        out["instructions"] = instructions
    ta, tb = before.get("tools") or {}, after.get("tools") or {}
    tools = {n: line_diff(ta.get(n), tb.get(n)) for n in dict.fromkeys([*ta, *tb])}
    tools = {n: rows for n, rows in tools.items() if rows}
    if tools:
        out["tools"] = tools
    return out
