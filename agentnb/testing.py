"""Helpers for your own tests: assert what the runtime promises.

    from agentnb.testing import assert_valid_conversation
    assert_valid_conversation(session)          # a Session, or a list of OpenAI dicts
    ungrounded_figures(session)                 # ["CA1234", "650"]: figures no source holds
    report = await replay(saved, agent)         # a saved run as a regression test
    await assert_replays(saved, agent)          # AssertionError naming every difference

Install the ``openai`` package to also check every message against the SDK's own request
types (``ChatCompletionMessageParam``); without it the pairing check still runs.

Grounding is one check (``agentnb.checks.grounded()`` and ``agentnb.travel.ungrounded_claims``
are this check under the names their users know); its text rule and normaliser live in
:mod:`agentnb.provenance`, which traces every value of a session, not only an answer's figures. The
*figures* of an answer — dates, times, codes that mix letters and digits (``MU5101``), amounts
(``3,000``, ``12.5``, ``80%``) — must each appear in a *source*: a tool result, or what the user
or the instructions said. Codes and times are compared as text; numbers by value (``880`` is
``880.0``; ``80%`` is ``0.8``; a result's ``-200`` grounds an overrun of ``200``); dates by the
day they name (``1月10日``, ``January 10`` and ``2025-01-10`` are one day). Numbers with fewer
than ``min_digits`` digits before the point are counts ("6 个航班", "1 晚"). A figure given as
an example (例如 1月10日, e.g. January 10, for example: …) claims nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from . import provenance
from .messages import parse_message
from .session.pairing import conversation_problems

__all__ = [
    "assert_no_regression",
    "assert_replays",
    "assert_valid_conversation",
    "replay",
    "ungrounded_answer",
    "ungrounded_figures",
]


def _sdk_check(messages: Sequence[dict[str, Any]]) -> None:
    try:
        from openai.types.chat import ChatCompletionMessageParam
        from pydantic import TypeAdapter
    except ImportError:  # the SDK is optional: pairing is checked all the same
        return
    adapter: Any = TypeAdapter(ChatCompletionMessageParam)
    for i, m in enumerate(messages):
        try:
            validated = adapter.validate_python(m)
            # pydantic checks Iterable[...] fields lazily: consume them so each item is checked.
            for key in ("tool_calls", "content"):
                value = validated.get(key)
                if value is not None and not isinstance(value, str):
                    list(value)
        except Exception as exc:
            raise AssertionError(f"message #{i} is not an OpenAI chat message: {exc}") from None


def assert_valid_conversation(conversation: Any) -> None:
    """Raise ``AssertionError`` unless ``conversation`` is one a model accepts.

    Every message has the OpenAI shape, and every assistant tool call is answered by
    exactly one tool message with its id before the next assistant or user message
    (invariant 2). ``conversation`` is a Session or a list of message dicts or objects.
    """
    items = conversation.to_openai() if hasattr(conversation, "to_openai") else conversation
    wires = [m if isinstance(m, dict) else m.to_openai() for m in items]
    _sdk_check(wires)
    messages = [parse_message(w, where=f"message #{i}") for i, w in enumerate(wires)]
    problems = conversation_problems(messages)
    if problems:
        raise AssertionError("not a valid conversation: " + "; ".join(map(str, problems)))


# -- grounding: is every figure of an answer in what the model was given? (the one check) ---
# The text rule and the normaliser have their one home in agentnb.provenance (grounding is
# provenance asked of an answer's figures); these names stay for their users.
FIGURE = provenance.FIGURE
EXAMPLE = provenance.EXAMPLE
examples = provenance.examples
figures = provenance.figures


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _wires(conversation: Any) -> list[dict[str, Any]]:
    items: Iterable[Any] = getattr(conversation, "messages", conversation)  # Session, RunResult
    return [m if isinstance(m, dict) else m.wire() for m in items]


def ungrounded_answer(answer: str, sources: Iterable[str], min_digits: int = 2) -> list[str]:
    """The figures of ``answer`` that none of ``sources`` (texts, JSON or not) holds, each once,
    in order, as the answer writes them (:func:`agentnb.provenance.ungrounded`)."""
    return provenance.ungrounded(answer, sources, min_digits)


def _ungrounded(conversation: Any, min_digits: int = 2) -> list[str]:
    """Figures of the final answer (the last assistant message, when it has text and no tool
    calls) that no tool result, user message or instruction holds; ``[]`` when there is no
    final answer. ``conversation``: a Session, a RunResult, or messages (objects or dicts)."""
    wires = _wires(conversation)
    last = next((i for i in range(len(wires) - 1, -1, -1)
                 if wires[i].get("role") == "assistant"), None)  # fmt: skip
    if last is None or wires[last].get("tool_calls") or not _text(wires[last].get("content")):
        return []
    sources = [_text(m.get("content")) for m in wires[:last] if m.get("role") != "assistant"]
    return ungrounded_answer(_text(wires[last].get("content")), sources, min_digits)


def ungrounded_figures(conversation: Any, min_digits: int = 2) -> list[str]:
    """Figures in the final answer that appear in no tool result (nor in what the user or the
    instructions said): :func:`agentnb.grounding.ungrounded`, the one grounding check.

    Its figures - dates in any written form, times, codes that mix letters and digits
    (``CA1234``), amounts (``3,000``, ``12.5``, ``80%``) - must each appear in a source: codes
    and times as text, numbers by value (``880`` matches ``880.0``; ``80%`` matches ``0.8``),
    dates by day. Numbers with fewer than ``min_digits`` digits are counts, and a figure given
    as an example (例如 1月10日, e.g. January 10) claims nothing. Returns the figures as the
    answer writes them, each once, in order; ``[]`` when every figure is grounded or there is
    no final answer. ``conversation`` is a Session, a RunResult, or a list of messages.
    """
    return _ungrounded(conversation, min_digits)


async def replay(recorded: Any, agent: Any, *, tools: str = "live") -> Any:
    """Feed a recorded run's model replies (a Session, Trace or RunResult) back through
    ``agent``'s current runtime and tools; returns a report with ``.ok`` and ``.differences``
    (see :mod:`agentnb.evals.replay`). ``tools="recorded"`` answers tools from the recording."""
    from .evals.replay import replay as _replay

    return await _replay(recorded, agent, tools=tools)  # type: ignore[arg-type]


async def assert_replays(recorded: Any, agent: Any, *, tools: str = "live") -> None:
    """Raise ``AssertionError`` listing every difference unless ``recorded`` replays exactly."""
    report = await replay(recorded, agent, tools=tools)
    if not report.ok:
        raise AssertionError(
            f"the recorded run no longer replays: {len(report.differences)} differences\n"
            + "\n".join(f"  {d}" for d in report.differences)
        )


def assert_no_regression(ev: Any, baseline: str, other: str, *, alpha: float = 0.05) -> Any:
    """Raise ``AssertionError`` when ``other`` regressed against ``baseline`` in ``ev`` (an
    :class:`~agentnb.Evaluation`): more paired losses than wins, with an exact McNemar p
    below ``alpha`` (the gate of ``python -m agentnb eval``). Returns the comparison."""
    from .evals.ci import regressed

    comparison = ev.compare(baseline, other)
    if regressed(comparison, alpha):
        flips = "; ".join(f"{t}#{r}: {a} -> {b}" for t, r, a, b in comparison.flips[:20])
        raise AssertionError(
            f"{other} regressed against {baseline} (p = {comparison.mcnemar_p:.3g} < {alpha}): "
            f"{comparison.losses} losses, {comparison.wins} wins; flips: {flips}"
        )
    return comparison
