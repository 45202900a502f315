"""Live views of sessions: the only part of agentnb that imports ipywidgets and anywidget.

    view = an.widgets.SessionView(session, agent=agent)   # or session.view(agent=agent)
    view                                                    # show it; it follows every change

One widget per view, its front end a plain ES module and a stylesheet shipped beside this
file (no build step). Each message or event reaches the browser as one small custom
message; a compressed snapshot lets late or reloaded views catch up. Every model and tool
text is put into the page as text, never as markup.
"""

from __future__ import annotations

from typing import Any

from ..display import static_session_bundle as static_bundle
from .controls import Driver
from .evals import EvalMatrix, TrajectoryDiff
from .inspectors import RequestInspector, SnapshotDiff, Timeline
from .optimise import OptimiseView
from .playground import Playground
from .proxy_view import ProxyView
from .queue_view import QueueView
from .session_view import SessionView

__all__ = [
    "Driver",
    "EvalMatrix",
    "OptimiseView",
    "Playground",
    "ProxyView",
    "QueueView",
    "RequestInspector",
    "SessionView",
    "SnapshotDiff",
    "Timeline",
    "TrajectoryDiff",
    "session_mimebundle",
    "static_bundle",
]


def session_mimebundle(session: Any) -> dict[str, Any]:
    """What ``Session._repr_mimebundle_`` returns in a kernel: the live view + static HTML.

    Evaluating a session shows the widget it already has (one made with ``SessionView`` or
    shown before) as one more view of it, so each change is still sent once.
    """
    view = SessionView.of(session)
    data, _meta = view._repr_mimebundle_()
    return dict(data)
