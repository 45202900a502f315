"""Helpers for your own tests: assert what the runtime promises.

    from agentnb.testing import assert_valid_conversation
    assert_valid_conversation(session)          # a Session, or a list of OpenAI dicts
    ungrounded_figures(session)                 # ["CA1234", "650"]: figures no source holds
    report = await replay(saved, agent)         # a saved run as a regression test
    await assert_replays(saved, agent)          # AssertionError naming every difference

Install the ``openai`` package to also check every message against the SDK's own request
types (``ChatCompletionMessageParam``); without it the pairing check still runs.

This module is a façade on top of the package: grounding lives with the other checks
(:mod:`agentnb.evals.checks.grounding`, the one grounding check; ``an.checks.grounded()`` and
``agentnb.travel.ungrounded_claims`` are the same check under the names their users know),
the replay in :mod:`agentnb.evals.replay`, the regression gate in :mod:`agentnb.evals.ci`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .evals.checks import ungrounded_answer, ungrounded_figures
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


def assert_no_regression(
    ev: Any,
    baseline: str,
    other: str,
    *,
    alpha: float = 0.05,
    gate: str = "tasks",
    noise: Any = None,
) -> Any:
    """Raise ``AssertionError`` when ``other`` regressed against ``baseline`` in ``ev`` (an
    :class:`~agentnb.Evaluation`), the gate of ``python -m agentnb eval``: by default more
    tasks regressed than improved (each task's repeats as its pass rate, so identical
    repeats count once) with an exact p below ``alpha``; ``gate="pairs"``: more paired
    losses than wins by the exact McNemar test, which assumes repeats independent. With
    ``noise`` (the baseline's :func:`~agentnb.evals.noise` floor) a difference within it is
    no verdict (``comparison.underpowered`` says why). Returns the comparison."""
    from .evals.ci import regressed

    comparison = ev.compare(baseline, other, noise=noise).using(gate)
    if regressed(comparison, alpha):
        flips = "; ".join(f"{t}#{r}: {a} -> {b}" for t, r, a, b in comparison.flips[:20])
        unit = "tasks" if gate == "tasks" else "pairs"
        raise AssertionError(
            f"{other} regressed against {baseline} (p = {comparison.p:.3g} < {alpha}, "
            f"{comparison.method}): {comparison.lost} {unit} lost, {comparison.won} won; "
            f"flips: {flips}"
        )
    return comparison
