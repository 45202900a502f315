"""Token estimates for budgets and displays when a model reports no usage.

The rule of thumb from the source articles (002 §4.1): about 4 characters per token for
English, about 2 characters per token for Chinese. Good enough to reason about budgets in
a notebook; a real tokenizer or the provider's usage figures replace it when available.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MESSAGE_OVERHEAD", "estimate_json_tokens", "estimate_tokens"]

#: Tokens a chat template adds around each message (role markers, separators).
MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str | None) -> int:
    """Estimate the tokens in ``text``: ASCII at 4 chars/token, other scripts at 2 chars/token."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    return max(1, -(-ascii_chars // 4) + -(-other // 2))


def estimate_json_tokens(value: Any) -> int:
    """Estimate the tokens of a JSON value as it would be serialised into a prompt."""
    return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
