"""QueueView: a live table of a Runtime's tasks, with the session of the row you click.

    rt.view()          # or an.widgets.QueueView(rt)

The header counts tasks per status and the queue's depth; each row shows a task's status,
attempt, iteration, latency, tokens and stop reason, and updates while it runs. Clicking a
row opens that task's session view below the table; Cancel on a row cancels the task.
Changes reach the browser as one small message per flush (every ``interval`` seconds, only
the rows that changed); a view that renders late asks for the whole table once. Clicks are
handled while tasks run: the tasks are background asyncio tasks, so the kernel is idle.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import ipywidgets  # type: ignore[import-untyped]
import traitlets

from .base import CSS, Widget
from .session_view import SessionView

__all__ = ["QueueTable", "QueueView"]

_HERE = Path(__file__).parent
ESM = "\n".join((_HERE / name).read_text(encoding="utf-8") for name in ("dom.js", "queue.js"))
QUEUE_CSS = CSS + (_HERE / "queue.css").read_text(encoding="utf-8")


def _row(info: Any) -> dict[str, Any]:
    return {
        "id": info.id,
        "session": info.session_id,
        "text": info.text[:80],
        "status": info.status,
        "attempt": info.attempt,
        "iteration": info.iteration,
        "latency": info.latency,
        "tokens": info.tokens,
        "stop": info.stop_reason,
        "error": (info.error or "")[:200],
    }


class QueueTable(Widget):
    """The table itself (an anywidget); :class:`QueueView` adds the session below it."""

    _esm = ESM
    _css = QUEUE_CSS
    kind = traitlets.Unicode("queue").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)

    def __init__(self, view: QueueView) -> None:
        self._view = view
        super().__init__()

    def _on_msg(self, content: dict[str, Any]) -> Any:
        op = content.get("op")
        if op == "hello":
            self._view.flush(everything=True)
        elif op == "cancel":
            return {"cancelled": self._view.runtime.cancel(str(content["task"]))}
        elif op == "open":
            self._view.open_task(str(content["task"]))
        return None


class QueueView(ipywidgets.VBox):  # type: ignore[misc]
    """The live view of a :class:`~agentnb.Runtime`'s tasks.

    Args:
        runtime: the runtime to follow.
        interval: seconds between two updates sent to the browser (at most).
        height: pixel height of the table's scrolling area.
    """

    def __init__(self, runtime: Any, *, interval: float = 0.2, height: int = 360) -> None:
        self.runtime = runtime
        self.interval = interval
        self.table = QueueTable(self)
        self.table.data = {"height": height}
        self.detail = ipywidgets.Box()
        super().__init__(children=[self.table, self.detail])
        self._dirty: set[str] = set()
        self._timer: asyncio.Task[None] | None = None
        self.sent = 0  # rows sent to the browser (a measure of the traffic)
        self.opened: SessionView | None = None
        self._unsubscribe = runtime.subscribe(self._changed)
        with contextlib.suppress(RuntimeError):  # no loop (a script): flush() by hand
            self._timer = asyncio.get_running_loop().create_task(self._ticks())

    def _changed(self, task: Any) -> None:
        self._dirty.add(task.id)

    async def _ticks(self) -> None:
        beat = 0
        while True:
            await asyncio.sleep(self.interval)
            beat += 1
            if beat * self.interval >= 1.0:  # running rows' latency moves even when idle
                beat = 0
                self._dirty.update(i.id for i in self.runtime.list(status="running"))
            if self._dirty:
                self.flush()

    def flush(self, *, everything: bool = False) -> None:
        """Send the rows that changed (all of them with ``everything``) and the counts."""
        if everything:
            infos = self.runtime.list()
        else:
            dirty, self._dirty = self._dirty, set()
            infos = []
            for task_id in dirty:
                with contextlib.suppress(Exception):  # gone meanwhile: nothing to show
                    infos.append(self.runtime.status(task_id))
        rows = [_row(i) for i in sorted(infos, key=lambda i: i.id)]  # ids sort by submission
        self.sent += len(rows)
        self.table.send({"op": "rows", "rows": rows, "reset": everything,
                         "counts": self.runtime.counts()})  # fmt: skip

    def open_task(self, task_id: str) -> SessionView:
        """Show the session of ``task_id`` below the table (as clicking its row does)."""
        info = self.runtime.status(task_id)
        self.opened = SessionView.of(self.runtime.session(info.session_id))
        self.detail.children = (self.opened,)
        self.table.selected = task_id
        return self.opened

    def close(self) -> None:
        self._unsubscribe()
        if self._timer is not None:
            self._timer.cancel()
        self.table.close()
        super().close()
