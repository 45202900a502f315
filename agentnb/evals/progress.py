"""A progress report on stderr that reads well where it lands.

On a terminal it is one line rewritten in place (a carriage return) at most every
:data:`TERMINAL_EVERY` seconds; in a CI log (stderr not a terminal) a carriage return makes
one endless line, so it is a whole line at most every :data:`LOG_EVERY` seconds. Either way
the last report is written when the work ends, on a line of its own.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["LOG_EVERY", "TERMINAL_EVERY", "ProgressLine"]

#: Seconds between rewrites of the line on a terminal.
TERMINAL_EVERY = 0.2
#: Seconds between lines in a log.
LOG_EVERY = 10.0


class ProgressLine:
    """``show(text)`` as the work goes (``force``: now, not throttled), ``show(text,
    final=True)`` when it ends."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty())
        self.every = TERMINAL_EVERY if self.terminal else LOG_EVERY
        self.shown: float | None = None
        self.last = ""

    def show(self, text: str, *, final: bool = False, force: bool = False) -> None:
        now = time.monotonic()
        throttled = self.shown is not None and now - self.shown < self.every
        if not (final or force) and throttled:
            return
        if not final and not self.terminal and text == self.last:
            return  # nothing new to log
        self.shown, self.last = now, text
        if self.terminal:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
