"""The one rule for the characters of a transcript that do not travel as they are.

* A **lone surrogate** (U+D800-U+DFFF without its pair: a tool that decoded bytes with
  ``surrogateescape``, a model reply cut mid-pair) is not Unicode and cannot be UTF-8. In
  JSON, wherever the transcript is stored or sent (SQLite, traces, JSONL exports, cassettes,
  request bodies to a model, the view's snapshot), it is written as its ``\\uXXXX`` escape:
  JSON keeps it exactly, and reading the text back gives the same string. Where text must be
  valid UTF-8 and is not JSON (HTML, text shown in a view or a display bundle) it is shown
  as U+FFFD (:func:`shown`).
* **U+2028, U+2029 and U+0085** are escaped in every JSON line agentnb writes
  (:func:`dumps`), so a reader that splits on Unicode line breaks (``str.splitlines``,
  JavaScript's older parsers) never tears a line; agentnb's readers split on ``\\n`` only.

Every file agentnb writes (traces, session exports, cassettes, saved evaluations) is written
by :func:`write_atomically`: a temporary file beside it, then a rename, so a failed write
leaves the old file whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, TypeVar, cast

T = TypeVar("T")

__all__ = ["dumps", "shown", "write_atomically"]

_UNSAFE = re.compile("[\ud800-\udfff\u2028\u2029\u0085]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)``, with the characters above
    escaped: always valid UTF-8, one line, read back exactly by ``json.loads``."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def shown(value: T) -> T:
    """``value`` (a string, or dicts and lists of them) with lone surrogates as U+FFFD: for
    text that is displayed, not stored. (Tuples come back as lists.)"""
    if isinstance(value, str):
        return cast(T, _SURROGATE.sub("\ufffd", value)) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return cast(T, {shown(k): shown(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return cast(T, [shown(v) for v in value])
    return value


def write_atomically(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` through a temporary file beside
    it and a rename: readers see the old file or the new one, never half of one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
