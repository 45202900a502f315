"""The observe tests: the proxy in front of real servers on 127.0.0.1 (the fault-injecting
one, a deterministic echo server, and llama.cpp's with SmolLM2 where the `local` extra is)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "servers"))

pytest.importorskip("starlette", reason="the `observe` extra is not installed: make dev")
pytest.importorskip("opentelemetry.sdk", reason="the `otel` extra is not installed: make dev")

from echo_server import EchoServer  # noqa: E402
from fault_server import FaultServer  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "local_model: needs the `local` extra (llama-cpp-python and the SmolLM2 GGUF)"
    )


@pytest.fixture
def fault_server():
    with FaultServer() as server:
        yield server


@pytest.fixture
def echo_server():
    with EchoServer() as server:
        yield server


@pytest.fixture(scope="session")
def llama_server():
    """One llama.cpp server; skipped only when the `local` extra is absent."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the `local` extra (llama-cpp-python) is not installed: `make local`")
    from agentnb.errors import ConfigurationError
    from agentnb.models.local import LocalServer

    try:
        server = LocalServer()
    except ConfigurationError as exc:
        pytest.skip(f"the SmolLM2 model file is missing: {exc}")
    with server:
        yield server


@pytest.fixture(autouse=True)
def no_observers_left():
    """Every test leaves the process-wide observers as it found them (none)."""
    from agentnb.session.bus import OBSERVERS

    before = list(OBSERVERS)
    yield
    assert before == OBSERVERS, "a test left an observer installed"
