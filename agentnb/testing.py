"""Helpers for your own tests: assert what the runtime promises.

    from agentnb.testing import assert_valid_conversation
    assert_valid_conversation(session)          # a Session, or a list of OpenAI dicts
    report = await replay(saved, agent)         # a saved run as a regression test
    await assert_replays(saved, agent)          # AssertionError naming every difference

Install the ``openai`` package to also check every message against the SDK's own request
types (``ChatCompletionMessageParam``); without it the pairing check still runs.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from typing import Any

from .messages import parse_message
from .session.pairing import conversation_problems

__all__ = [
    "assert_no_regression",
    "assert_replays",
    "assert_valid_conversation",
    "replay",
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


# -- grounding: are the figures of a final answer in the tool results? ------------------------
#: Figures: dates, times, codes mixing letters and digits (flight numbers), then numbers.
_FIGURE = re.compile(
    r"(?<![A-Za-z0-9.])(?:"
    r"(?P<date>\d{4}-\d{1,2}-\d{1,2})"
    r"|(?P<time>\d{1,2}:\d{2})"
    r"|(?P<code>[A-Za-z0-9]*(?:[A-Za-z][0-9]|[0-9][A-Z])[A-Za-z0-9]*)"
    r"|(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<pct>%)?"
    r")(?![A-Za-z0-9])"
)
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _wires(conversation: Any) -> list[dict[str, Any]]:
    items = getattr(conversation, "messages", conversation)  # a Session or a RunResult
    return [m if isinstance(m, dict) else m.wire() for m in items]


def _collect_numbers(value: Any, out: set[float]) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        out.add(abs(float(value)))
    elif isinstance(value, str):
        out.update(float(n.replace(",", "")) for n in _NUMBER.findall(value))
    elif isinstance(value, dict):
        for v in value.values():
            _collect_numbers(v, out)
    elif isinstance(value, list):
        for v in value:
            _collect_numbers(v, out)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def ungrounded_figures(conversation: Any) -> list[str]:
    """Figures in the final answer that appear in no tool result (nor in what the user said).

    A generic fabrication check for any domain: the final answer is the last assistant
    message with text and no tool calls. Its figures - dates, times, codes that mix letters
    and digits (``CA1234``), amounts (``3,000``, ``12.5``, ``80%``) - must each appear in a tool
    result or a user or system message: codes, dates and times as text; numbers by value
    (``880`` matches ``880.0``; ``80%`` matches ``0.8``). Whole numbers up to 10 are not
    checked (counts and list markers). Returns the figures as the answer writes them, each
    once, in order; ``[]`` when every figure is grounded or there is no final answer.

    ``conversation`` is a Session, a RunResult, or a list of messages (objects or dicts).
    """
    wires = _wires(conversation)
    final = next(
        (i for i in range(len(wires) - 1, -1, -1) if wires[i].get("role") == "assistant"), None
    )
    if final is None or wires[final].get("tool_calls") or not _text(wires[final].get("content")):
        return []
    sources = [_text(m.get("content")) for m in wires[:final] if m.get("role") != "assistant"]
    evidence = "\n".join(sources)
    numbers: set[float] = set()
    for text in sources:
        value: Any = text
        with contextlib.suppress(ValueError):
            value = json.loads(text)
        _collect_numbers(value, numbers)
    out: dict[str, None] = {}
    for match in _FIGURE.finditer(_text(wires[final].get("content"))):
        figure = match.group(0)
        if match.group("number") is not None:
            value = float(match.group("number").replace(",", ""))
            if match.group("pct") is None and value.is_integer() and value <= 10:
                continue
            if value in numbers or (match.group("pct") and round(value / 100, 6) in numbers):
                continue
        elif figure in evidence:
            continue
        out[figure] = None
    return list(out)


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
