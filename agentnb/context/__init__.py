"""What history a request carries: the token budget, the policies choosing the history
(keep all, drop the oldest turns, keep the last turns, summarise), and long-term memory."""

from .policies import (
    Budget,
    ContextPolicy,
    DropOldest,
    KeepAll,
    KeepLastTurns,
    Selection,
    turn_groups,
)

__all__ = [
    "Budget",
    "ContextPolicy",
    "DropOldest",
    "KeepAll",
    "KeepLastTurns",
    "Selection",
    "turn_groups",
]
