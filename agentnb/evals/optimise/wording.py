"""Counts in the optimiser's messages: "1 metric call", "2 metric calls"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (every noun here takes an "s")."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
