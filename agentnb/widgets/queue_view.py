"""QueueView: a live table of a Runtime's tasks, with the session of the row you click.

    rt.view()          # or an.widgets.QueueView(rt)

One anywidget (``kind="queue"``, its front end ``queue.js`` in the one ES module). The header
counts tasks per status and the queue's depth; each row shows a task's status, attempt,
iteration, latency, tokens and stop reason, and updates while it runs. Clicking a row opens
that task's :class:`SessionView` under the table, composed into the same output (the browser
renders the child widget in place); Cancel on a row cancels the task.

Changes reach the browser as one small custom message per flush (every ``interval``
seconds, only the rows that changed). A task awaiting approval shows its call with Approve
and Deny (``rt.approve`` / ``rt.deny``), and so does its session's view. A compressed
``snapshot`` of every row, refreshed at most every ``refresh_every`` seconds, lets a late view
or a reloaded notebook draw at once, and a view that renders asks for the whole table once.
Clicks are handled while tasks run: the tasks are background asyncio tasks, so the kernel is
idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import traitlets

from . import payload
from .approvals import TaskApprover
from .base import Widget
from .session_view import SessionView

__all__ = ["QueueView"]


def _row(info: Any, waiting: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    calls = [
        {k: p[k] for k in ("call_id", "tool", "digest")} | {"arguments": p["arguments"][:120]}
        for p in waiting.get(info.id, ())
    ]
    return {
        "approvals": calls,
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


class QueueView(Widget):
    """The live view of a :class:`~agentnb.Runtime`'s tasks.

    Args:
        runtime: the runtime to follow.
        interval: seconds between two updates sent to the browser (at most).
        height: pixel height of the table's scrolling area.
        refresh_every: seconds between two refreshes of the snapshot (at most).
    """

    #: Every row and the counts, compressed (what a late or reloaded view draws first).
    snapshot = traitlets.Bytes(b"").tag(sync=True)
    #: The id of the task whose session is open.
    selected = traitlets.Unicode("").tag(sync=True)
    #: ``anywidget:<id>`` of the open session's view (the browser renders it in place).
    view = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        runtime: Any,
        *,
        interval: float = 0.2,
        height: int = 360,
        refresh_every: float = 5.0,
    ) -> None:
        self.runtime = runtime
        self.interval = interval
        self.refresh_every = refresh_every
        self.sent = 0  # rows sent to the browser (a measure of the traffic)
        self.opened: SessionView | None = None
        self._dirty: set[str] = set()
        self._refreshed = 0.0
        super().__init__(kind="queue", data={"height": height}, snapshot=self._pack())
        self._unsubscribe = runtime.subscribe(self._changed)
        self._timer: asyncio.Task[None] | None = None
        with contextlib.suppress(RuntimeError):  # no loop (a script): flush() by hand
            self._timer = asyncio.get_running_loop().create_task(self._ticks())

    def _waiting(self) -> dict[str, list[dict[str, Any]]]:
        """The calls awaiting approval, by task."""
        out: dict[str, list[dict[str, Any]]] = {}
        for p in self.runtime.approvals():
            out.setdefault(p.task_id, []).append(p.row())
        return out

    def _pack(self) -> bytes:
        self._refreshed = time.monotonic()
        waiting = self._waiting()
        rows = [_row(i, waiting) for i in self.runtime.list()]  # in submission order
        return payload.pack({"rows": rows, "counts": self.runtime.counts()})

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
        waiting = self._waiting() if any(i.status == "awaiting_approval" for i in infos) else {}
        rows = [_row(i, waiting) for i in sorted(infos, key=lambda i: i.id)]  # by submission
        self.sent += len(rows)
        msg = {"op": "rows", "rows": rows, "reset": everything, "counts": self.runtime.counts()}
        self.send(payload.sendable(msg)[0])
        if time.monotonic() - self._refreshed >= self.refresh_every:
            self.snapshot = self._pack()

    def _on_msg(self, content: dict[str, Any]) -> Any:
        op = content.get("op")
        if op == "hello":  # a view rendered: the whole table, as it is now
            self.flush(everything=True)
        elif op == "cancel":
            return {"cancelled": self.runtime.cancel(str(content["task"]))}
        elif op == "open":
            self.open_task(str(content["task"]))
        elif op in ("approve", "deny"):  # Approve / Deny on a waiting task's row
            task, call, digest = str(content["task"]), str(content["call"]), str(content["digest"])
            if op == "approve":
                done = self.runtime.approve(task, call, digest=digest)
            else:
                done = self.runtime.deny(task, call, "denied in the queue view", digest=digest)
            asyncio.ensure_future(done).add_done_callback(self._decided)
        return None

    def _decided(self, done: asyncio.Future[Any]) -> None:
        if not done.cancelled() and done.exception() is not None:
            self.report(done.exception())  # type: ignore[arg-type]
        if self.opened is not None:
            self.opened.waiting.refresh()
            self.opened.send_waiting()

    def open_task(self, task_id: str) -> SessionView:
        """Show the session of ``task_id`` under the table (as clicking its row does)."""
        info = self.runtime.status(task_id)
        self.opened = SessionView.of(self.runtime.session(info.session_id))
        self.opened.waiting.approver = TaskApprover(self.runtime)  # Approve / Deny on its calls
        self.opened.waiting.refresh()
        self.opened.send_waiting()
        self.selected = task_id
        self.view = f"anywidget:{self.opened.model_id}"
        return self.opened

    def close(self) -> None:
        self._unsubscribe()
        if self._timer is not None:
            self._timer.cancel()
        super().close()

    def __repr__(self) -> str:
        return f"<QueueView of {self.runtime!r}>"
