"""Counting tokens: the ``Tokenizer`` seam and its documented default, a heuristic.

Budgets (``assemble``), displays and usage estimates count through a :class:`Tokenizer`.
The default, :class:`HeuristicTokenizer`, follows the rule of thumb of the source articles
(002 §4.1): about 4 characters per token for ASCII text, about 2 per token for Chinese and
other scripts, plus :data:`MESSAGE_OVERHEAD` tokens per message for the chat template. A model
that knows its tokenizer may bring its own (``model.tokenizer``); provider-reported usage
(``ModelResponded.usage``) is the ground truth to compare with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "MESSAGE_OVERHEAD",
    "HeuristicTokenizer",
    "Tokenizer",
    "content_text",
    "estimate_json_tokens",
    "estimate_tokens",
]

#: Tokens a chat template adds around each message (role markers, separators).
MESSAGE_OVERHEAD = 4


def content_text(content: Any) -> str:
    """The text of a message's ``content``: the string itself, or the ``text`` of each part
    of multi-part content joined ('' for none). The one rule everyone reads text by
    (re-exported as :func:`agentnb.messages.content_text`); it lives here, the lowest layer
    that reads text, because counting tokens needs it too."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def estimate_tokens(text: str | None) -> int:
    """Estimate the tokens in ``text``: ASCII at 4 chars/token, other scripts at 2 chars/token."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    tokens = -(-ascii_chars // 4) + -(-other // 2)  # ceiling divisions
    return tokens if tokens > 0 else 1


def estimate_json_tokens(value: Any) -> int:
    """Estimate the tokens of a JSON value as it would be serialised into a prompt."""
    return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens of text, of one wire message, and of a JSON value (tool schemas)."""

    name: str

    def count(self, text: str | None) -> int: ...

    def count_message(self, wire: Mapping[str, Any]) -> int: ...

    def count_json(self, value: Any) -> int: ...


class HeuristicTokenizer:
    """The documented default: characters per token by script, plus a per-message overhead.

    ``scale`` calibrates it: set it to ``reported / estimated`` from a provider's usage figures
    (see :meth:`calibrated`) and every count is multiplied by it.
    """

    name = "heuristic"

    def __init__(self, scale: float = 1.0) -> None:
        if not scale > 0:
            raise ValueError(f"scale must be positive, got {scale!r}")
        self.scale = scale

    def count(self, text: str | None) -> int:
        n = estimate_tokens(text)
        return n if self.scale == 1.0 else round(n * self.scale)

    def count_message(self, wire: Mapping[str, Any]) -> int:
        """The message's text with its tool calls' names and arguments, plus the overhead
        (the same count as ``Message.tokens``)."""
        text = content_text(wire.get("content"))
        for call in wire.get("tool_calls") or ():
            fn = call.get("function") or {}
            text += str(fn.get("name") or "") + str(fn.get("arguments") or "")
        n = MESSAGE_OVERHEAD + estimate_tokens(text)
        return n if self.scale == 1.0 else round(n * self.scale)

    def count_json(self, value: Any) -> int:
        n = estimate_json_tokens(value) if value else 0
        return n if self.scale == 1.0 else round(n * self.scale)

    @classmethod
    def calibrated(cls, estimated: int, reported: int) -> HeuristicTokenizer:
        """A heuristic scaled so that ``estimated`` becomes a provider's ``reported`` count."""
        if estimated <= 0 or reported <= 0:
            return cls()
        return cls(reported / estimated)

    def __repr__(self) -> str:
        return f"<HeuristicTokenizer scale={self.scale:.3g}>"


#: The shared default (stateless; calibrate with ``HeuristicTokenizer.calibrated``).
DEFAULT_TOKENIZER = HeuristicTokenizer()
