"""Which view shows which object: the registry behind :mod:`agentnb.display`'s door.

One row per type, named by the module that defines it and its class name (the type is
looked up in ``sys.modules`` only: an object of a module never imported cannot be shown, so
the registry imports nothing of the runtime). Each row gives:

* ``live`` - the widget a cell shows for the object when it is evaluated or displayed
  (``display.bundle``): the session's own view, a new matrix per cell, ...; None for types
  that show their static form (a proxy or a runtime shows a view only when asked);
* named views - what ``display.view(obj, name, ...)`` makes: ``"view"`` for every type,
  ``"diff"`` (the trajectory diff) for an evaluation.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..display import static
from .evals import EvalMatrix, TrajectoryDiff
from .grid import OutputsGrid
from .log_view import ExperimentsView
from .optimise import OptimiseView
from .proxy_view import ProxyView
from .queue_view import QueueView
from .session_view import SessionView

__all__ = ["REGISTRY", "Views", "bundle", "has_view", "lookup", "view"]


@dataclass(frozen=True)
class Views:
    """The views of one type (see the module docstring)."""

    #: ``live(obj)``: the widget to show in a cell, or None when this cell already shows one.
    live: Callable[[Any], Any] | None = None
    #: name -> ``factory(obj, *args, **options)``.
    named: Mapping[str, Callable[..., Any]] = field(default_factory=dict)


#: (module, class name) -> its views, most specific type first.
REGISTRY: dict[tuple[str, str], Views] = {
    ("agentnb.session.session", "Session"): Views(live=SessionView.of, named={"view": SessionView}),
    ("agentnb.evals.conversation", "Conversation"): Views(
        live=SessionView.of_conversation,
        named={"view": lambda c, **o: SessionView(c.session, conversation=c, **o)},
    ),
    ("agentnb.evals.evaluation", "Evaluation"): Views(
        live=EvalMatrix.for_cell, named={"view": EvalMatrix, "diff": TrajectoryDiff.of}
    ),
    ("agentnb.evals.outputs", "Outputs"): Views(live=OutputsGrid, named={"view": OutputsGrid}),
    ("agentnb.evals.log.store", "ExperimentLog"): Views(
        live=ExperimentsView, named={"view": ExperimentsView}
    ),
    ("agentnb.evals.optimise.optimisation", "Optimisation"): Views(
        live=OptimiseView, named={"view": OptimiseView}
    ),
    ("agentnb.observe.server", "Proxy"): Views(named={"view": ProxyView}),
    ("agentnb.service.runtime", "Runtime"): Views(named={"view": QueueView}),
}


def lookup(obj: Any) -> Views | None:
    """The views registered for ``obj``'s type (or a base of it), or None."""
    for (module, name), views in REGISTRY.items():
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and isinstance(obj, cls):
            return views
    return None


def has_view(obj: Any) -> bool:
    """Whether a cell evaluating ``obj`` shows a live view."""
    found = lookup(obj)
    return found is not None and found.live is not None


def view(obj: Any, name: str = "view", /, *args: Any, **options: Any) -> Any:
    """The view ``name`` of ``obj``, made with ``args`` and ``options``."""
    found = lookup(obj)
    factory = found.named.get(name) if found is not None else None
    if factory is None:
        known = sorted(found.named) if found is not None else []
        raise TypeError(f"no view {name!r} of a {type(obj).__name__} (its views: {known})")
    return factory(obj, *args, **options)


def bundle(obj: Any) -> dict[str, Any] | None:
    """The live bundle of ``obj`` (its view's, with its static form beside it), or None when
    no live view is registered for its type. A cell that already shows ``obj``'s view gets
    the object's one line of text instead of a second view."""
    found = lookup(obj)
    if found is None or found.live is None:
        return None
    widget = found.live(obj)
    if widget is None:
        return static(repr(obj), "", include=("text/plain",))
    data, _meta = widget._repr_mimebundle_()
    return dict(data)
