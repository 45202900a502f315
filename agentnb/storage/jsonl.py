"""A session as a JSONL file: a header line, then one OpenAI message per line, and back.

``store.export_jsonl(id, path)`` and ``store.import_jsonl(path)`` call these. The file is
written atomically (a temporary file beside it, then a rename: a failed export leaves the
old file whole) and with the transcript's one rule for characters (:mod:`agentnb._json`):
lone surrogates and U+2028/U+2029/U+0085 are JSON escapes, so every line stays one line
and reads back exactly. Reading splits on ``\\n`` only.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _json
from ..errors import ConfigurationError, StoreError
from ..session.store import Store, validate_session_id

if TYPE_CHECKING:
    from ..session.session import Session

__all__ = ["export_session", "import_session", "write_atomically"]

#: The header line's key naming the session.
HEADER_KEY = "agentnb_session"


def write_atomically(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (never half-written)."""
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


def export_session(store: Store, session_id: str, path: str | Path) -> Path:
    """Write the stored session ``session_id`` to ``path`` (atomically; see the module)."""
    version, messages = store.read(validate_session_id(session_id))
    records: list[Any] = [{HEADER_KEY: session_id, "version": version}, *messages]
    text = "".join(_json.dumps(r) + "\n" for r in records)
    try:
        return write_atomically(path, text)
    except OSError as exc:
        raise StoreError(f"session {session_id!r} could not be exported to {path}: {exc}") from exc


def import_session(store: Store, path: str | Path, session_id: str | None = None) -> Session:
    """Store the session in ``path`` (written by :func:`export_session`, or a plain list of
    messages with ``session_id``) and return it."""
    from ..session.session import Session

    try:
        lines = [line for line in Path(path).read_text(encoding="utf-8").split("\n") if line]
        records = [json.loads(line) for line in lines]
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigurationError(f"{path} is not an exported agentnb session: {exc}") from None
    header = records[0] if records and isinstance(records[0], dict) else {}
    if HEADER_KEY in header:
        records = records[1:]
    elif session_id is None:  # a plain list of messages: nothing names the session
        raise ConfigurationError(
            f"{path} has no header line naming the session; pass session_id=... to import "
            "it as a plain list of messages"
        )
    name = session_id or header[HEADER_KEY]
    if validate_session_id(name) in store.list():
        raise ConfigurationError(
            f"session {name!r} is already in this store; delete it first, or import it "
            "under another id with session_id=..."
        )
    return Session(records, id=name, store=store)
