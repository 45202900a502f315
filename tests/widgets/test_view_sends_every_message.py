"""The view under hostile use: every message is sent, lone surrogates included."""

from __future__ import annotations

import json

import pytest

import agentnb as an


def test_the_view_sends_every_message_even_with_a_lone_surrogate(comm_recorder=None):
    pytest.importorskip("anywidget")
    session = an.Session()
    view = an.widgets.SessionView(session)
    sent: list[dict] = []
    view.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
    for text in ("a", "lone \ud800", "c"):
        session.append({"role": "user", "content": text})
    indexes = [m.get("i", m.get("index")) for m in sent if m.get("op") in ("append", "msg")]
    assert len([m for m in sent if "lone" in json.dumps(m, ensure_ascii=False)]) == 1
    assert len(indexes) == 3 or len(sent) >= 3
    an.widgets.SessionView(session)  # a second view packs a snapshot with the surrogate
