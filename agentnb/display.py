"""How objects show in a notebook: one door.

Every object agentnb shows in a cell is :class:`Shown`: it has a ``static_bundle()`` - its
form without a kernel, ``text/plain`` and escaped ``text/html``, which nbviewer and GitHub
render from a saved notebook - and its ``_repr_mimebundle_`` is :func:`bundle`, the door:

* in a Jupyter kernel with ``agentnb[widgets]`` installed, the live bundle of the view
  registered for the object's type (:mod:`agentnb.widgets.registry`: a ``Session`` shows its
  ``SessionView``, an ``Evaluation`` its matrix, an ``Optimisation`` its live view), with the
  static form beside it;
* anywhere else - no kernel, no ipywidgets, a type no view is registered for - the object's
  ``static_bundle()``.

:func:`view` makes a registered view by hand (``session.view()``, ``runtime.view()``,
``ev.diff(...)``). Every static bundle is made by :func:`static`, the one constructor: it
applies the character rule (a lone surrogate is shown as U+FFFD: :mod:`agentnb._json`) to
``text/plain`` and ``text/html`` alike, and honours the ``include`` / ``exclude`` lists
IPython passes (a part left out is never computed). A renderer that writes its own HTML
escapes its text with :func:`escape` and shows plain text with :func:`shown`, the same rule.

The runtime never imports Jupyter (invariant 5): :mod:`agentnb.widgets` is looked up here, by
name, only when an object is shown or a view is asked for - the one documented edge from the
runtime to the views. This module needs nothing of the package above its lowest layer, so
every layer can show itself through it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import _html, _json
from ._html import escape
from ._json import shown

if TYPE_CHECKING:
    from .messages import Message
    from .session.pairing import Problem

__all__ = [
    "SOURCED_LIMIT",
    "STATIC_LIMIT",
    "Shown",
    "bundle",
    "escape",
    "has_view",
    "in_kernel",
    "show",
    "show_live",
    "shown",
    "static",
    "transcript_bundle",
    "view",
]

#: A saved notebook carries at most this many messages of a session as static HTML.
STATIC_LIMIT = 500
#: Its HTML says where each call's argument came from up to this many messages (a value is
#: searched for in everything before it: 0.2 s for 300 messages of travel runs, 11 s for the
#: last 500 of 5,000); flagged spans and steered calls are marked at any length.
SOURCED_LIMIT = 300

Part = str | Callable[[], str]


def _views(feature: str | None = None) -> ModuleType | None:
    """:mod:`agentnb.widgets`, by name: the door's one lookup. Without ipywidgets/anywidget:
    None, or (with ``feature``) an ImportError naming it and the extra that brings it."""
    try:
        return importlib.import_module("agentnb.widgets")
    except ImportError as exc:
        if feature is None:
            return None
        raise ImportError(
            f"{feature} needs ipywidgets and anywidget ({exc}); pip install 'agentnb[widgets]'"
        ) from None


def in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (it has imported ipykernel)."""
    return "ipykernel" in sys.modules


def _chosen(data: dict[str, Any], include: Any, exclude: Any) -> dict[str, Any]:
    if include:
        data = {k: v for k, v in data.items() if k in include}
    if exclude:
        data = {k: v for k, v in data.items() if k not in exclude}
    return data


def static(
    plain: Part,
    html: Part,
    *,
    include: Collection[str] | None = None,
    exclude: Collection[str] | None = None,
) -> dict[str, str]:
    """The one constructor of a static bundle: ``text/plain`` and ``text/html`` (each a
    string, or a function computing it, called only when that part is wanted), with lone
    surrogates shown as U+FFFD in both, so the bundle is valid UTF-8 whatever a model, a
    tool or a user wrote. ``include`` / ``exclude``: the mimetypes IPython asks for."""
    out: dict[str, str] = {}
    for mime, part in (("text/plain", plain), ("text/html", html)):
        if (include and mime not in include) or (exclude and mime in exclude):
            continue
        out[mime] = _json.shown(part if isinstance(part, str) else part())
    return out


def bundle(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """What ``obj`` shows in a cell (see the module docstring): the live bundle of its
    registered view in a kernel that has the widgets, else ``obj.static_bundle()``."""
    if in_kernel():
        views = _views()
        if views is not None:
            live: dict[str, Any] | None = views.bundle(obj)
            if live is not None:
                return _chosen(live, include, exclude)
    data: dict[str, Any] = obj.static_bundle(include=include, exclude=exclude)
    return data


def view(obj: Any, name: str = "view", /, *args: Any, **options: Any) -> Any:
    """The live view ``name`` of ``obj`` (``"view"``: the one registered for its type;
    ``"diff"`` of an Evaluation: the trajectory diff), made with ``args`` and ``options``.
    Needs ``agentnb[widgets]``; a TypeError when no such view is registered."""
    views = _views(f"the live view of a {type(obj).__name__}")
    assert views is not None
    return views.view(obj, name, *args, **options)


def has_view(obj: Any) -> bool:
    """Whether ``obj`` would show a live view here (the widgets installed, a view
    registered for its type)."""
    views = _views()
    return views is not None and bool(views.has_view(obj))


def show(obj: Any) -> None:
    """``IPython.display.display(obj)``, looked up by name (IPython is there whenever a
    kernel is: callers check :func:`in_kernel`)."""
    importlib.import_module("IPython.display").display(obj)


def show_live(obj: Any) -> Callable[[], None]:
    """Show ``obj``'s live view (as :func:`show`) and return ``refresh``: it publishes the view
    again in place with ``obj``'s static form as it is then. A saved notebook keeps what a
    cell published last, so a view shown when its work began (an evaluation at 0 of 585 runs)
    is saved as its finished state once ``refresh()`` ran, not as its first frame."""
    shown = importlib.import_module("IPython.display")
    data = bundle(obj)  # the live view is made once, here; refresh shows the same one
    handle = shown.display(data, raw=True, display_id=True)

    def refresh() -> None:
        handle.update({**data, **obj.static_bundle()}, raw=True)

    return refresh


class Shown:
    """Mixed into every object agentnb shows: its ``_repr_mimebundle_`` is the door
    (:func:`bundle`). Its static form is its repr and :meth:`static_html`, unless it writes
    its own :meth:`static_bundle` (with :func:`static` too)."""

    __slots__ = ()

    def static_bundle(
        self, include: Collection[str] | None = None, exclude: Collection[str] | None = None
    ) -> dict[str, str]:
        """``text/plain`` and escaped ``text/html``: what nbviewer and GitHub show."""
        return static(lambda: repr(self), self.static_html, include=include, exclude=exclude)

    def static_html(self) -> str:
        """The escaped HTML of the static form."""
        raise NotImplementedError

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return bundle(self, include, exclude)


def transcript_bundle(
    messages: Sequence[Message],
    wires: Sequence[Mapping[str, Any]],
    *,
    title: str,
    problems: Sequence[Problem] = (),
    first: int = 0,
    limit: int = STATIC_LIMIT,
    marks: Callable[[int, int], Mapping[int, Mapping[str, Any]]] | None = None,
    include: Collection[str] | None = None,
    exclude: Collection[str] | None = None,
) -> dict[str, str]:
    """Messages as a static bundle, numbered from ``first`` (as in their session), every
    pairing problem shown at its message; of a long list the last ``limit`` only, saying how
    many earlier are hidden. The one renderer of a transcript: ``Session``, ``RunResult``
    and the live view's saved copy. ``marks(start, end)``: provenance's marks of the messages
    before ``end`` by message index (a flagged span highlighted with why, a steered call with
    its link to the result it came from, and from ``start`` on each argument's sources:
    :meth:`agentnb.provenance.Provenance.marks`), called only when the HTML is made; past
    :data:`SOURCED_LIMIT` messages the title says the arguments' sources are not shown."""
    hidden = max(len(messages) - limit, 0)
    start = first + hidden
    if hidden:
        title += f" — {hidden} earlier {'message' if hidden == 1 else 'messages'} not shown"

    def plain() -> str:
        shown = enumerate(messages[hidden:], start)
        return "\n".join([title] + [f"  #{i} {m!r}" for i, m in shown])

    def html() -> str:
        notes: dict[int, list[str]] = {}
        for problem in problems:
            notes.setdefault(problem.index, []).append(problem.text)
        end, head = first + len(messages), title
        marked = None
        if marks is not None:
            sourced = end <= SOURCED_LIMIT
            marked = marks(start if sourced else end, end)
            if not sourced:
                head += f" (arguments' sources not shown past {SOURCED_LIMIT} messages: "
                head += "session.provenance() traces them)"
        shown = list(wires[hidden:])
        return _html.transcript(shown, title=head, notes=notes, start=start, marks=marked)

    return static(plain, html, include=include, exclude=exclude)
