"""How runtime objects show in a notebook: the live view when it is installed, else static HTML.

The runtime never imports Jupyter (invariant 5). Only when a session is *displayed* inside a
running kernel does this module look for :mod:`agentnb.widgets`, by name; without ipywidgets
and anywidget a session shows as escaped static HTML, which is also what nbviewer and GitHub
render from a saved notebook.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from . import _html

if TYPE_CHECKING:
    from .session.session import Session

__all__ = ["live_view", "session_bundle", "static_session_bundle"]


def live_view(session: Session, **options: Any) -> Any:
    """``agentnb.widgets.SessionView(session, **options)``; needs ``agentnb[widgets]``."""
    try:
        widgets = importlib.import_module("agentnb.widgets")
    except ImportError as exc:
        raise ImportError(
            f"the live view needs ipywidgets and anywidget ({exc}); pip install 'agentnb[widgets]'"
        ) from None
    return widgets.SessionView(session, **options)


def session_bundle(session: Session) -> dict[str, Any]:
    """The live view's bundle inside a kernel that has it, else the static one."""
    if "ipykernel" in sys.modules:
        try:
            widgets = importlib.import_module("agentnb.widgets")
        except ImportError:
            pass
        else:
            bundle: dict[str, Any] = widgets.session_mimebundle(session)
            return bundle
    return static_session_bundle(session)


#: A saved notebook carries at most this many messages of a session as static HTML.
STATIC_LIMIT = 500


def static_session_bundle(session: Session, limit: int = STATIC_LIMIT) -> dict[str, str]:
    """text/plain and escaped text/html, every pairing problem shown at its message; the
    last ``limit`` messages only, so a long session does not bloat the saved notebook."""
    notes: dict[int, list[str]] = {}
    for problem in session.problems:
        index, _, text = problem.partition(": ")
        notes.setdefault(int(index.lstrip("#")), []).append(text)
    messages, wires = session.transcript.messages, session.transcript.wires
    start = max(len(messages) - limit, 0)
    title = repr(session) + (f" — the last {limit} shown" if start else "")
    lines = [title] + [f"  #{i} {m!r}" for i, m in enumerate(messages[start:], start)]
    html = _html.transcript(wires[start:], title=title, notes=notes, start=start)
    return {"text/plain": "\n".join(lines), "text/html": html}
