"""The widget base: one ES module and one stylesheet, shipped beside this file, no build step.

Every agentnb widget is an ``anywidget.AnyWidget`` whose front end is the concatenation of
the ``.js`` files below (plain JavaScript, in this order) and ``view.css``. The ``kind``
trait tells the module which view to draw. Messages from the browser arrive in
:meth:`Widget._on_msg`; an error while handling one is shown in the view, never swallowed.
"""

from __future__ import annotations

import asyncio
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

__all__ = ["ESM", "Following", "Throttle", "Widget"]

_HERE = Path(__file__).parent
#: The front end, in dependency order: helpers, cards, the windowed list, the store, views.
JS_FILES = (
    "dom.js",
    "cards.js",
    "sourcing.js",
    "list.js",
    "store.js",
    "session.js",
    "inspect.js",
    "evals.js",
    "grid.js",
    "log.js",
    "optimise.js",
    "proxy.js",
    "queue.js",
    "main.js",
)
ESM = "\n".join((_HERE / name).read_text(encoding="utf-8") for name in JS_FILES)
CSS = "\n".join((_HERE / name).read_text(encoding="utf-8") for name in ("view.css", "queue.css"))


class Widget(anywidget.AnyWidget):
    """Shared traits: ``kind`` (which view), ``uid`` (stable id), ``data`` (one-shot state)."""

    _esm = ESM
    _css = CSS
    kind = traitlets.Unicode("session").tag(sync=True)
    uid = traitlets.Unicode().tag(sync=True)
    data = traitlets.Dict().tag(sync=True)
    #: Errors raised while handling the browser's messages (also shown in the view).
    errors: list[str]

    def __init__(self, **kwargs: Any) -> None:
        self.errors = []
        super().__init__(uid=uuid.uuid4().hex, **kwargs)
        self.on_msg(self._receive)

    def _receive(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("kind") == "anywidget-command":
            return
        try:
            reply = self._on_msg(content)
        except Exception as exc:
            self.report(exc)
            return
        if reply is not None and "id" in content:
            self.send({"op": "reply", "id": content["id"], "data": reply})

    def _on_msg(self, content: dict[str, Any]) -> Any:
        """Handle one message from the browser; a returned value is sent back as the reply."""
        return None

    def subject(self) -> Any:
        """The object this view shows, whose static form its bundle carries for nbviewer and
        GitHub (a session, an evaluation, an optimisation), or None."""
        return None

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        shown = self.subject()
        if shown is not None:
            data.update(shown.static_bundle())
        return data, meta

    def report(self, exc: BaseException) -> str:
        """Show an error in the view (and keep it in ``errors``); returns the text shown."""
        text = f"{type(exc).__name__}: {exc}"
        detail = "".join(traceback.format_exception(exc)[-6:])
        self.errors.append(text)
        self.send({"op": "error", "text": text, "detail": detail})
        return text


class Throttle:
    """At most one ``flush`` per ``every`` seconds while changes keep coming (a live view's
    batched updates): ``soon()`` arms a timer on the running loop, or flushes at once with no
    loop or ``every <= 0``; the flush calls ``cancel()`` so a timer it made needless never fires."""

    def __init__(self, every: float, flush: Callable[[], None]) -> None:
        self.every = every
        self.flush = flush
        self._timer: asyncio.TimerHandle | None = None

    def soon(self) -> None:
        if self.every <= 0:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._timer = loop.call_later(self.every, self.flush)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class Following(Widget):
    """A live view of something that reports its changes (an evaluation, an optimisation):
    its updates batched by a :class:`Throttle`; closed, it stops listening."""

    _throttle: Throttle
    _unsubscribe: Callable[[], None]

    def close(self) -> None:
        # getattr: anywidget may close a view whose __init__ did not get that far
        if (unsubscribe := getattr(self, "_unsubscribe", None)) is not None:
            unsubscribe()
        if (throttle := getattr(self, "_throttle", None)) is not None:
            throttle.cancel()
        super().close()
