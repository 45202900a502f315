"""Helpers for your own tests: assert what the runtime promises.

    from agentnb.testing import assert_valid_conversation
    assert_valid_conversation(session)          # a Session, or a list of OpenAI dicts

Install the ``openai`` package to also check every message against the SDK's own request
types (``ChatCompletionMessageParam``); without it the pairing check still runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .messages import parse_message
from .session.pairing import conversation_problems

__all__ = ["assert_valid_conversation"]


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
