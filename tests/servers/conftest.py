"""Real servers on 127.0.0.1, started by the tests: the fault-injecting one and llama.cpp's."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fault_server import FaultServer


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "local_model: needs the `local` extra (llama-cpp-python and the SmolLM2 GGUF)"
    )


@pytest.fixture
def fault_server():
    with FaultServer() as server:
        yield server


@pytest.fixture(scope="session")
def llama_server():
    """One llama.cpp server for the session; skipped only when the `local` extra is absent."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the `local` extra is not installed (make test installs it)")
    from agentnb.errors import ConfigurationError
    from agentnb.models.local import LocalServer

    try:
        server = LocalServer()
    except ConfigurationError as exc:
        pytest.skip(f"the SmolLM2 model file is missing: {exc}")
    with server:
        yield server
