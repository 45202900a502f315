"""The runtime: one module per lifecycle stage, the loop that orders them, the Run driver.

restore → assemble → call_model → decide → execute_tools → check_stop → persist

Public for a service that runs agents (``agentnb.service``): what a run asks of a
:class:`CallGuard` before a guarded call (an :class:`ApprovalRequest`, answered with a
:data:`Verdict`); see :mod:`agentnb.runtime.guard`. And for a recorder of runs the runtime
does not drive (``agentnb.observe``'s proxy): :class:`ExternalRun`, the run state such a
run is recorded through (its ids, events, record, usage and stop made as every run's).

Public for the evaluations (``agentnb.evals``), which run checks and proposers as the runtime
runs a tool: ``finish(fn())`` in a worker thread (:func:`in_thread`), awaited with a deadline
that cannot be ignored (:func:`bounded`); and the one rule for a setting in seconds
(:func:`seconds`: positive and finite, or None for no limit, as the Agent's timeouts).
"""

from .._settings import seconds
from .check_stop import RunView
from .external import ExternalRun
from .guard import ApprovalRequest, CallGuard, Verdict
from .result import RunResult
from .run import Run
from .tool_work import bounded, in_thread

__all__ = [
    "ApprovalRequest",
    "CallGuard",
    "ExternalRun",
    "Run",
    "RunResult",
    "RunView",
    "Verdict",
    "bounded",
    "in_thread",
    "seconds",
]
