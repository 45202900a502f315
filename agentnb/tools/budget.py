"""The time one validation may spend matching a schema's ``pattern`` keywords.

:class:`~.schema.SchemaValidator` starts the budget of each validation; the compiled check
(:mod:`.accept`) and the bounded engine (:mod:`.patterns`) spend from it. Its own module, so
the two that spend it need not import the validator that compiles them.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["BUDGET", "DEADLINE"]

#: CPU seconds one validation may spend matching ``pattern``s, all together (:mod:`.patterns`).
BUDGET = 0.1

#: When the running validation's pattern budget ends (``time.thread_time()``).
DEADLINE: ContextVar[float] = ContextVar("agentnb_pattern_deadline", default=0.0)
