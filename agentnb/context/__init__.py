"""What history a request carries: the token budget, the policies choosing the history
(keep all, drop the oldest turns, keep the last turns, summarise), and long-term memory."""

from . import policies
from .policies import *  # noqa: F403  (the package's names are the module's)

__all__ = list(policies.__all__)
