"""Where ids are made: the one minting site of run ids and of trace ids.

A run id names one run (``r-`` and 48 random bits); a trace id names the whole a run belongs
to (128 random bits, a uuid4's hex, as W3C trace context and OpenTelemetry expect). Every run
— one an agent drives, an attempt of a service task, a call the proxy watched — gets its ids
here, so they read alike and cannot collide by construction.
"""

from __future__ import annotations

import os

__all__ = ["new_run_id", "new_trace_id"]


def new_run_id() -> str:
    """A fresh run id: ``r-`` and 12 hex digits."""
    return "r-" + os.urandom(6).hex()


def new_trace_id() -> str:
    """A fresh trace id: 32 hex digits (128 random bits)."""
    return os.urandom(16).hex()
