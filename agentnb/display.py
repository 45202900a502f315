"""How runtime objects show in a notebook: the live view when it is installed, else static HTML.

The runtime never imports Jupyter (invariant 5). Only when a session is *displayed* inside a
running kernel does this module look for :mod:`agentnb.widgets`, by name; without ipywidgets
and anywidget a session shows as escaped static HTML, which is also what nbviewer and GitHub
render from a saved notebook.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import _html, _json
from .messages import Message

if TYPE_CHECKING:
    from .session.pairing import Problem
    from .session.session import Session

__all__ = [
    "in_kernel",
    "live_view",
    "session_bundle",
    "show",
    "static_bundle",
    "static_session_bundle",
    "widgets",
]


def widgets(feature: str = "the live view") -> ModuleType:
    """:mod:`agentnb.widgets`, looked up by name: the one place below ``widgets`` that reaches
    Jupyter (invariant 5). Without ipywidgets/anywidget, an ImportError naming ``feature`` and
    the extra that brings it."""
    try:
        return importlib.import_module("agentnb.widgets")
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs ipywidgets and anywidget ({exc}); pip install 'agentnb[widgets]'"
        ) from None


def in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (it has imported ipykernel)."""
    return "ipykernel" in sys.modules


def show(obj: Any, *, raw: bool = False) -> None:
    """``IPython.display.display(obj)``, looked up by name (IPython is there whenever a
    display hook calls this)."""
    importlib.import_module("IPython.display").display(obj, raw=raw)


def live_view(session: Session, **options: Any) -> Any:
    """``agentnb.widgets.SessionView(session, **options)``; needs ``agentnb[widgets]``."""
    return widgets("the live view").SessionView(session, **options)


def session_bundle(session: Session) -> dict[str, Any]:
    """The live view's bundle inside a kernel that has it, else the static one."""
    if in_kernel():
        try:
            module = widgets()
        except ImportError:
            pass
        else:
            bundle: dict[str, Any] = module.session_mimebundle(session)
            return bundle
    return static_session_bundle(session)


#: A saved notebook carries at most this many messages of a session as static HTML.
STATIC_LIMIT = 500


def static_session_bundle(session: Session, limit: int = STATIC_LIMIT) -> dict[str, str]:
    """The session as text/plain and escaped text/html (what nbviewer and GitHub show): the
    one static renderer, used by ``Session``, ``RunResult`` and the live view's saved copy."""
    messages = session.transcript.messages
    return static_bundle(
        messages,
        session.transcript.wires,
        title=repr(session),
        problems=session.problems,
        limit=limit,
    )


def static_bundle(
    messages: Sequence[Message],
    wires: Sequence[Mapping[str, Any]],
    *,
    title: str,
    problems: Sequence[Problem] = (),
    first: int = 0,
    limit: int = STATIC_LIMIT,
) -> dict[str, str]:
    """Messages numbered from ``first`` (as in their session), every pairing problem shown at
    its message; of a long list the last ``limit`` only, saying how many earlier are hidden."""
    notes: dict[int, list[str]] = {}
    for problem in problems:
        notes.setdefault(problem.index, []).append(problem.text)
    hidden = max(len(messages) - limit, 0)
    start = first + hidden
    if hidden:
        title += f" — {hidden} earlier {'message' if hidden == 1 else 'messages'} not shown"
    shown = enumerate(messages[hidden:], start)
    lines = [title] + [f"  #{i} {m!r}" for i, m in shown]
    html = _html.transcript(list(wires[hidden:]), title=title, notes=notes, start=start)
    # lone surrogates shown as U+FFFD: a display bundle must be UTF-8 (agentnb._json's rule)
    return {"text/plain": _json.shown("\n".join(lines)), "text/html": _json.shown(html)}
