"""Grounding: is every figure of an answer in what the model was given? The one check.

``an.checks.grounded()`` (:class:`~agentnb.evals.checks.answers.Grounded`),
``agentnb.testing.ungrounded_figures`` and ``agentnb.travel.ungrounded_claims`` are this check
under the names their users know. The *figures* of an answer — dates, times, codes that mix
letters and digits (``MU5101``), amounts (``3,000``, ``12.5``, ``80%``) — must each appear in a
*source*: a tool result, or what the user or the instructions said. Codes and times are
compared as text; numbers by value (``880`` is ``880.0``; ``80%`` is ``0.8``; a result's
``-200`` grounds an overrun of ``200``); dates by the day they name (``1月10日``, ``January 10``
and ``2025-01-10`` are one day). Numbers with fewer than ``min_digits`` digits before the
point are counts ("6 个航班", "1 晚"). A figure given as an example (例如 1月10日, e.g. January
10, for example: …) claims nothing. Messages are read by
:func:`agentnb.messages.content_text`, the one rule for text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ... import provenance
from ...messages import content_text

__all__ = ["EXAMPLE", "FIGURE", "examples", "figures", "ungrounded_answer", "ungrounded_figures"]

#: A figure, where an example starts, the examples of a text and the figures it claims: the
#: one text rule of :mod:`agentnb.provenance`, which traces every value of a session.
FIGURE = provenance.FIGURE
EXAMPLE = provenance.EXAMPLE
examples = provenance.examples
figures = provenance.figures


def _wires(conversation: Any) -> list[dict[str, Any]]:
    items: Iterable[Any] = getattr(conversation, "messages", conversation)  # Session, RunResult
    return [m if isinstance(m, dict) else m.wire() for m in items]


def ungrounded_answer(answer: str, sources: Iterable[str], min_digits: int = 2) -> list[str]:
    """The figures of ``answer`` that none of ``sources`` (texts, JSON or not) holds, each once,
    in order, as the answer writes them (:func:`agentnb.provenance.ungrounded`)."""
    return provenance.ungrounded(answer, sources, min_digits)


def ungrounded_figures(conversation: Any, min_digits: int = 2) -> list[str]:
    """Figures in the final answer (the last assistant message, when it has text and no tool
    calls) that appear in no tool result, nor in what the user or the instructions said: the
    one grounding check (see the module docstring). Returns the figures as the answer writes
    them, each once, in order; ``[]`` when every figure is grounded or there is no final
    answer. ``conversation`` is a Session, a RunResult, or a list of messages."""
    wires = _wires(conversation)
    last = next((i for i in range(len(wires) - 1, -1, -1)
                 if wires[i].get("role") == "assistant"), None)  # fmt: skip
    answer = content_text(wires[last].get("content")) if last is not None else ""
    if last is None or wires[last].get("tool_calls") or not answer:
        return []
    sources = [content_text(m.get("content")) for m in wires[:last] if m.get("role") != "assistant"]
    return ungrounded_answer(answer, sources, min_digits)
