"""Watch any app's agent loop: a recording proxy, OpenTelemetry GenAI export, log levels.

* :func:`proxy` - a recording proxy for Chat Completions, the Responses API and Anthropic
  Messages: the app changes only its base URL, its conversations become agentnb sessions
  (the ``observe`` extra: starlette, uvicorn);
* :func:`instrument` - every run and proxied call as OpenTelemetry GenAI spans (the ``otel``
  extra);
* :func:`log` (also ``an.log``) - stdlib logging at ``trace``, ``summary`` or ``error``;
* :func:`serve` - any agentnb model (the travel stand-in by default) behind the same three
  APIs, an upstream to watch an app on without a real model.

Each is an explicit, process-wide opt-in; importing this package loads none of the extras.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .logs import LEVELS, log

if TYPE_CHECKING:
    from .genai import span_table
    from .otel import Instrumentation, instrument
    from .server import Proxy, proxy
    from .standin import ModelServer, serve

__all__ = [
    "LEVELS",
    "Instrumentation",
    "ModelServer",
    "Proxy",
    "instrument",
    "log",
    "proxy",
    "serve",
    "span_table",
]

_LAZY = {
    "proxy": ("server", "observe"),
    "Proxy": ("server", "observe"),
    "serve": ("standin", "observe"),
    "ModelServer": ("standin", "observe"),
    "instrument": ("otel", "otel"),
    "Instrumentation": ("otel", "otel"),
    "span_table": ("genai", "otel"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'agentnb.observe' has no attribute {name!r}")
    module, extra = _LAZY[name]
    try:
        loaded = importlib.import_module(f".{module}", __name__)
    except ImportError as exc:
        raise ImportError(
            f"agentnb.observe.{name} needs the {extra!r} extra ({exc}); "
            f"pip install 'agentnb[{extra}]'"
        ) from None
    return getattr(loaded, name)
