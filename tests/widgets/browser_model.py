"""A Python model of the ES module's Store (agentnb/widgets/session.js), for kernel-side tests.

It reads what a RecordingComm recorded exactly as the browser would: the snapshot trait
(opened with the comm, then updates) and the custom messages, skipping those already in
the snapshot and asking for a fresh snapshot when one was lost.
"""

from __future__ import annotations

from typing import Any

from agentnb.widgets.payload import unpack


class BrowserModel:
    def __init__(self, comm: Any, widget: Any, *, start: int = 0) -> None:
        self.comm = comm
        self.widget = widget
        self.seq = 0
        self.msgs: list[dict[str, Any]] = []
        self.status: dict[str, Any] = {}
        self.asked_sync = 0
        paths = comm.open_data.get("buffer_paths", [])
        for path, blob in zip(paths, comm.open_buffers, strict=False):
            if path == ["snapshot"]:
                self.load(blob)
        self.pos = start  # messages before `start` were sent before this view existed

    def load(self, blob: bytes) -> None:
        if not blob:
            return
        s = unpack(blob)
        if s["seq"] >= self.seq:
            self.msgs = [m["w"] for m in s["messages"]]
            self.seq = s["seq"]
            self.status = s["status"]

    def pump(self) -> None:
        while self.pos < len(self.comm.sent):
            data, buffers = self.comm.sent[self.pos]
            self.pos += 1
            if data.get("method") == "update" and ["snapshot"] in data["buffer_paths"]:
                index = data["buffer_paths"].index(["snapshot"])
                self.load(buffers[index])
            elif data.get("method") == "custom":
                self.apply(data["content"])

    def apply(self, msg: dict[str, Any]) -> None:
        seq = msg.get("seq")
        if seq is None or seq <= self.seq:
            return
        if seq > self.seq + 1:
            self.asked_sync += 1
            self.widget._receive(self.widget, {"op": "sync"}, [])
            return
        self.seq = seq
        op = msg["op"]
        if op in ("append", "replace"):
            if msg["index"] == len(self.msgs):
                self.msgs.append(msg["m"]["w"])
            else:
                self.msgs[msg["index"]] = msg["m"]["w"]
        elif op == "delete":
            del self.msgs[msg["index"]]
        elif op == "truncate":
            del self.msgs[msg["length"] :]
        if "status" in msg:
            self.status = {**self.status, **msg["status"]}
