"""ProxyView: the conversations a recording proxy has seen, each opening its live session view.

``proxy.view()`` in a cell: a list of conversations (id, size, what it forked from, pairing
problems) kept current as the app runs, and under it the :class:`SessionView` of the one
picked, which grows with each proxied call. The proxy records on its own thread; the list
and the views are told from there (ipykernel sends widget messages from any thread).
"""

from __future__ import annotations

from typing import Any

import ipywidgets  # type: ignore[import-untyped]

from .session_view import SessionView

__all__ = ["ProxyView"]


def _label(session: Any) -> str:
    bits = [session.id, f"{len(session)} messages"]
    if session.forked_from:
        bits.append(f"branch of {session.forked_from}")
    if not session.is_valid:
        bits.append(f"{len(session.problems)} problems")
    return " · ".join(bits)


class ProxyView(ipywidgets.VBox):  # type: ignore[misc]
    """The conversations of ``proxy`` and the live view of the one picked."""

    def __init__(self, proxy: Any, *, height: int = 520) -> None:
        self.proxy = proxy
        self.height = height
        self.views: dict[str, SessionView] = {}
        self.title = ipywidgets.HTML()
        self.picker = ipywidgets.Select(options=[], rows=6, layout={"width": "100%"})
        self.holder = ipywidgets.VBox()
        self._updating = False
        super().__init__([self.title, self.picker, self.holder])
        self.picker.observe(self._picked, names="value")
        proxy.recorder.listeners.append(self.update)
        self.update()

    def update(self) -> None:
        """Refresh the list (the recorder calls this after every call begins and ends)."""
        sessions = self.proxy.sessions
        options = [(_label(s), s.id) for s in sessions]
        calls = len(self.proxy.recorder.calls)
        self.title.value = (
            f"<b>{len(sessions)} conversations</b>, {calls} model calls through "
            f"<code>{self.proxy.base_url}</code>"
        )
        if options != list(self.picker.options):
            current = self.picker.value
            self._updating = True
            try:
                self.picker.options = options
                ids = [i for _, i in options]
                self.picker.value = current if current in ids else (ids[0] if ids else None)
            finally:
                self._updating = False
            if current != self.picker.value:
                self._show(self.picker.value)

    def _picked(self, change: dict[str, Any]) -> None:
        if not self._updating:
            self._show(change["new"])

    def _show(self, session_id: str | None) -> None:
        if session_id is None:
            self.holder.children = ()
            return
        view = self.views.get(session_id)
        if view is None:
            view = self.views[session_id] = SessionView(
                self.proxy.session(session_id), height=self.height
            )
        self.holder.children = (view,)

    @property
    def current(self) -> SessionView | None:
        """The session view shown now."""
        return self.holder.children[0] if self.holder.children else None

    def close(self) -> None:
        if self.update in self.proxy.recorder.listeners:
            self.proxy.recorder.listeners.remove(self.update)
        for view in self.views.values():
            view.close()
        super().close()
