"""ProxyView, kernel side: one anywidget (the project's one widget style) listing the proxy's
conversations as they come, composing the picked session's view, a pick from the browser."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import agentnb as an
from agentnb.widgets import ProxyView, SessionView
from agentnb.widgets.base import Widget

pytest.importorskip("starlette")


def _post(proxy, messages, **headers):
    body = {"model": "m", "messages": messages}
    return httpx.post(f"{proxy.base_url}/chat/completions", json=body, headers=headers).json()


def test_the_proxy_view_lists_conversations_and_composes_the_picked_session(comms: list[Any]):
    with an.observe.serve() as upstream, an.observe.proxy(upstream=upstream.base_url) as proxy:
        view = proxy.view(height=300)
        assert isinstance(view, ProxyView) and isinstance(view, Widget)  # an anywidget
        assert view.kind == "proxy" and view.data["conversations"] == [] and view.view == ""
        first = [{"role": "user", "content": "周五北京天气？"}]
        reply = _post(proxy, first)["choices"][0]["message"]
        _post(proxy, [*first, reply, {"role": "user", "content": "还有航班？"}])
        _post(proxy, [{"role": "user", "content": "other"}], **{"x-session-id": "trip-7"})
        rows = view.data["conversations"]
        assert [r["id"] for r in rows] == [proxy.sessions[0].id, "trip-7"]
        assert rows[0]["messages"] == 4 and rows[0]["calls"] == 2 and not rows[0]["live"]
        assert rows[0]["stop"] in ("final_answer", "custom") and view.data["calls"] == 3
        # the first conversation is shown as soon as it exists, composed by reference
        current = view.current
        assert isinstance(current, SessionView) and current.session is proxy.sessions[0]
        assert view.view == f"anywidget:{current.model_id}"
        assert current._status["state"] == "stopped"  # its last stop, not "idle"
        # the browser picks the other one
        comm = next(c for c in comms if c.comm_id == view.comm.comm_id)
        comm.deliver({"op": "pick", "id": "trip-7"})
        assert view.picked == "trip-7" and view.current.session.id == "trip-7"
        assert view.data["picked"] == "trip-7" and view.errors == []
        view.close()
        assert view.update not in proxy.recorder.listeners
