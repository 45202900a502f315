"""Log levels through stdlib ``logging`` (article 002 §3.3): one switch, ``an.log(level)``.

Records go to the logger ``"agentnb"``; each carries ``session_id``, ``run_id`` and
``trace_id`` as attributes (``extra``), plus ``event`` (the event type):

=========== ========= =================================================================
level       logging   what is logged
=========== ========= =================================================================
``trace``   DEBUG     every event (agentnb runs and proxied calls), with the full request
                      (``RequestAssembled``) and response (``ModelResponded``) as JSON on
                      the line after the event's summary
``summary`` INFO      one line per run: stop reason, steps, tokens, latency
``error``   ERROR     failures: a run that ended in an error (the exception, in words), a
                      tool that failed, a reply the runtime had to correct, an upstream
                      error; each with the model's raw output (``raw_output``)
=========== ========= =================================================================

Each level includes the ones below it. Nothing is logged until ``an.log`` is called (the
logger stays at its default, warnings only); ``an.log(None)`` switches it off again.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from ..events import (
    Decided,
    Event,
    ModelResponded,
    RequestAssembled,
    RunStopped,
    ToolFinished,
    ToolStarted,
)
from ..session import add_observer
from .calls import UpstreamFailed

__all__ = ["LEVELS", "LogObserver", "log", "logger"]

#: agentnb's level names and the logging levels they switch on.
LEVELS = {"trace": logging.DEBUG, "summary": logging.INFO, "error": logging.ERROR}
logger = logging.getLogger("agentnb")
_FORMAT = "%(levelname)s agentnb %(event)s [%(session_id)s %(run_id)s]: %(message)s"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class LogObserver:
    """Turns events into log records (installed by :func:`log`; one per process)."""

    def __init__(self, target: logging.Logger = logger) -> None:
        self.logger = target
        self._raw: dict[str | None, str] = {}  # run id -> the model's last raw output

    def _log(self, level: int, event: Event, message: str, **extra: Any) -> None:
        extra.update(
            {
                "session_id": event.session_id,
                "run_id": event.run_id,
                "trace_id": event.trace_id,
                "event": event.type,
                "stage": event.stage,
                "seq": event.seq,  # read, not written: the bus numbers events
            }
        )
        self.logger.log(level, "%s", message, extra=extra)

    def __call__(self, event: Event) -> None:
        match event:
            case ModelResponded():
                self._raw[event.run_id] = _json(event.message.wire())
            case ToolStarted():
                self._raw[event.run_id] = event.arguments
        if self.logger.isEnabledFor(logging.DEBUG):
            self._trace(event)
        if isinstance(event, RunStopped):
            self._stopped(event)
        elif self.logger.isEnabledFor(logging.ERROR):
            self._failure(event)

    def _trace(self, event: Event) -> None:
        text = f"{event.stage}: {event.summary()}"
        match event:
            case RequestAssembled(request=request):
                body = {"messages": request.messages, "tools": request.tools, **request.params}
                text += "\n" + _json(body)
            case ModelResponded():
                text += "\n" + _json({"message": event.message.wire(), "usage": event.usage})
        self._log(logging.DEBUG, event, text)

    def _stopped(self, event: RunStopped) -> None:
        usage = event.usage
        latency = event.time - event.origin.t0
        raw = self._raw.pop(event.run_id, None)
        if event.reason == "error" and self.logger.isEnabledFor(logging.ERROR):
            self._log(
                logging.ERROR,
                event,
                f"run failed in {event.stopped_in}: {event.detail}",
                exception=event.detail,
                raw_output=raw,
            )
        if self.logger.isEnabledFor(logging.INFO):
            tokens = usage.total_tokens
            self._log(
                logging.INFO,
                event,
                f"run {event.run_id} stopped: {event.reason} after {event.iterations} "
                f"steps, {tokens}{'~' if usage.estimated else ''} tokens, {latency:.3f} s"
                f" ({event.detail})",
                stop_reason=event.reason,
                steps=event.iterations,
                tokens=tokens,
                latency=latency,
            )

    def _failure(self, event: Event) -> None:
        raw = self._raw.get(event.run_id)
        match event:
            case ToolFinished(ok=False):
                what = f"tool {event.name} failed ({event.kind}): {event.content}"
                self._log(logging.ERROR, event, what, exception=event.content, raw_output=raw)
            case Decided(problems=problems) if problems:
                text = "; ".join(problems)
                what = f"the reply needed a correction: {text}"
                self._log(logging.ERROR, event, what, exception=text, raw_output=raw)
            case UpstreamFailed():
                what = f"upstream call failed: {event.error}"
                self._log(logging.ERROR, event, what, exception=event.error, raw_output=event.error)


_installed: list[Callable[[], None]] = []


def log(
    level: str | None = "summary",
    *,
    handler: logging.Handler | bool | None = None,
) -> logging.Logger:
    """Log agentnb's runs at ``level``: ``"trace"``, ``"summary"`` or ``"error"``; ``None`` stops.

    ``handler``: a handler to add to the ``agentnb`` logger; by default one printing to
    stderr is added when the logger has none (``False``: add nothing, e.g. when the root
    logger is configured). Returns the logger.
    """
    for remove in _installed:
        remove()
    _installed.clear()
    if level is None:
        logger.setLevel(logging.NOTSET)
        return logger
    if level not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; choose one of {list(LEVELS)} or None")
    logger.setLevel(LEVELS[level])
    if isinstance(handler, logging.Handler):
        logger.addHandler(handler)
    elif handler is None and not logger.handlers:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(logging.Formatter(_FORMAT))
        logger.addHandler(stream)
    _installed.append(add_observer(LogObserver()))
    return logger
