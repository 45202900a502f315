"""Live views of sessions: the only part of agentnb that imports ipywidgets and anywidget.

    view = an.widgets.SessionView(session, agent=agent)   # or session.view(agent=agent)
    view                                                    # show it; it follows every change

One widget per view, its front end a plain ES module and a stylesheet shipped beside this
file (no build step). Each message or event reaches the browser as one small custom
message; a compressed snapshot lets late or reloaded views catch up. Every model and tool
text is put into the page as text, never as markup.

Which view shows which object is :mod:`.registry`'s table: :mod:`agentnb.display` reaches it
through :func:`bundle` (what a cell shows), :func:`view` and :func:`has_view`.
"""

from __future__ import annotations

from .controls import Driver
from .evals import EvalMatrix, TrajectoryDiff
from .grid import OutputsGrid
from .inspectors import RequestInspector, SnapshotDiff, Timeline
from .log_view import ExperimentsView
from .optimise import OptimiseView
from .playground import Playground
from .proxy_view import ProxyView
from .queue_view import QueueView
from .registry import REGISTRY, bundle, has_view, view
from .session_view import SessionView

__all__ = [
    "REGISTRY",
    "Driver",
    "EvalMatrix",
    "ExperimentsView",
    "OptimiseView",
    "OutputsGrid",
    "Playground",
    "ProxyView",
    "QueueView",
    "RequestInspector",
    "SessionView",
    "SnapshotDiff",
    "Timeline",
    "TrajectoryDiff",
    "bundle",
    "has_view",
    "view",
]
