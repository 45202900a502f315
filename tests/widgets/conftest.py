"""A recording comm: widgets under test send into a list instead of a kernel.

As ipywidgets' own tests do (``widgets/tests/utils.py``), ``comm.create_comm`` is replaced,
so every widget created in a test talks to a :class:`RecordingComm`. ``deliver`` plays the
browser: it hands a custom message to the widget as the kernel would.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

pytest.importorskip("anywidget")


class RecordingComm:
    kernel = "recording"  # truthy: ipywidgets sends only when a kernel is attached

    def __init__(self, **kwargs: Any) -> None:
        self.comm_id = kwargs.get("comm_id") or uuid.uuid4().hex
        self.open_data = kwargs.get("data") or {}
        self.open_buffers = [bytes(b) for b in kwargs.get("buffers") or ()]
        self.sent: list[tuple[dict[str, Any], list[bytes]]] = []
        self.handlers: list[Any] = []
        self.closed = False

    def on_msg(self, callback: Any) -> None:
        self.handlers.append(callback)

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.sent.append((data, [bytes(b) for b in buffers or ()]))

    def close(self, *args: Any, **kwargs: Any) -> None:
        self.closed = True

    # -- for the tests ----------------------------------------------------------------------
    def deliver(self, content: dict[str, Any]) -> None:
        """A custom message from the browser."""
        msg = {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
        for handler in self.handlers:
            handler(msg)

    def custom(self) -> list[dict[str, Any]]:
        return [d["content"] for d, _ in self.sent if d.get("method") == "custom"]

    def updates(self, name: str) -> list[tuple[dict[str, Any], list[bytes]]]:
        return [
            (d, b)
            for d, b in self.sent
            if d.get("method") == "update" and (name in d["state"] or [name] in d["buffer_paths"])
        ]

    def nbytes(self, start: int = 0) -> int:
        """Bytes sent since message ``start``: compact UTF-8 JSON plus binary buffers."""
        total = 0
        for data, buffers in self.sent[start:]:
            total += len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())
            total += sum(len(b) for b in buffers)
        return total


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> list[RecordingComm]:
    """Every comm opened during the test, in order."""
    import comm

    opened: list[RecordingComm] = []

    def create_comm(**kwargs: Any) -> RecordingComm:
        c = RecordingComm(**kwargs)
        opened.append(c)
        return c

    monkeypatch.setattr(comm, "create_comm", create_comm)
    return opened
