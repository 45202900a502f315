"""The observe tests: the proxy in front of real servers on 127.0.0.1 (the fault-injecting
one and llama.cpp's with SmolLM2 come from ``tests/conftest.py``; the deterministic echo
server is theirs)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the `observe` extra is not installed: make dev")
pytest.importorskip("opentelemetry.sdk", reason="the `otel` extra is not installed: make dev")

from tests.observe.echo_server import EchoServer


@pytest.fixture
def echo_server():
    with EchoServer() as server:
        yield server


@pytest.fixture(autouse=True)
def no_observers_left():
    """Every test leaves the process-wide observers as it found them (none)."""
    from agentnb.session.bus import OBSERVERS

    before = list(OBSERVERS)
    yield
    assert before == OBSERVERS, "a test left an observer installed"
