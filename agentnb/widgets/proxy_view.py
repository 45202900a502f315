"""ProxyView: the conversations a recording proxy has seen, each opening its live session view.

``proxy.view()`` in a cell: one anywidget (``kind="proxy"``, the front end in ``proxy.js``)
listing the conversations - id, size, how each came to be (a branch, a compaction, an
unthreaded one and why), pairing problems, a call in flight - kept current as the app runs,
and under it the :class:`SessionView` of the one picked, composed into the same output (the
browser renders the child widget in place). The proxy records on its own thread; the list
and the views are told from there (ipykernel sends widget messages from any thread).
"""

from __future__ import annotations

from typing import Any

import traitlets

from .base import Widget
from .session_view import SessionView

__all__ = ["ProxyView"]


def _row(conversation: Any) -> dict[str, Any]:
    session = conversation.session
    row: dict[str, Any] = {
        "id": session.id,
        "messages": len(session),
        "calls": len(session.runs),  # a run per proxied call (its record says how it ended)
        "how": conversation.how,
        "parent": conversation.parent,
        "note": conversation.note,
        "problems": len(session.problems),
        "live": session.active_run is not None,
    }
    last = session.runs[-1] if session.runs else None
    if last is not None and last.stop_reason is not None:
        row["stop"] = last.stop_reason
    return row


class ProxyView(Widget):
    """The conversations of ``proxy`` and the live view of the one picked.

    Args:
        proxy: an :class:`~agentnb.observe.Proxy`.
        height: pixel height of the picked session's transcript.
    """

    #: ``anywidget:<id>`` of the picked session's view (the browser renders it in place).
    view = traitlets.Unicode("").tag(sync=True)

    def __init__(self, proxy: Any, *, height: int = 520) -> None:
        self.proxy = proxy
        self.height = height
        self.views: dict[str, SessionView] = {}
        self._picked: str | None = None
        super().__init__(kind="proxy", data=self._data())
        proxy.recorder.listeners.append(self.update)
        self.update()

    def _data(self) -> dict[str, Any]:
        recorder = self.proxy.recorder
        return {
            "conversations": [_row(c) for c in recorder.conversations.conversations],
            "calls": len(recorder.calls),
            "skipped": len(recorder.skipped),
            "base_url": self.proxy.base_url,
            "picked": self._picked,
        }

    def update(self) -> None:
        """Refresh the list (the recorder calls this after every call begins and ends); the
        first conversation is picked as soon as there is one."""
        if self._picked is None and self.proxy.sessions:
            self.pick(self.proxy.sessions[0].id)
            return
        data = self._data()
        if data != self.data:
            self.data = data

    def pick(self, session_id: str) -> SessionView:
        """Show the session ``session_id`` under the list; returns its view."""
        view = self.views.get(session_id)
        if view is None:
            session = self.proxy.session(session_id)
            view = self.views[session_id] = SessionView(session, height=self.height)
        self._picked = session_id
        self.view = f"anywidget:{view.model_id}"
        self.data = self._data()
        return view

    @property
    def picked(self) -> str | None:
        """The id of the session shown."""
        return self._picked

    @property
    def current(self) -> SessionView | None:
        """The session view shown now."""
        return None if self._picked is None else self.views[self._picked]

    def _on_msg(self, content: dict[str, Any]) -> Any:
        if content.get("op") == "pick":
            self.pick(str(content["id"]))
        return None

    def close(self) -> None:
        if self.update in self.proxy.recorder.listeners:
            self.proxy.recorder.listeners.remove(self.update)
        for view in self.views.values():
            view.close()
        super().close()
