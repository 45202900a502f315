"""agentnb.models.local without starting anything: finding the model, the server's config."""

from __future__ import annotations

import httpx
import pytest

from agentnb.errors import ConfigurationError
from agentnb.models.local import ALIASES, LocalServer
from agentnb.models.local.smollm2 import GGUF_NAME, find_model


def test_find_model_takes_a_path_or_the_environment(tmp_path, monkeypatch):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert find_model(gguf) == gguf
    monkeypatch.setenv("AGENTNB_GGUF", str(gguf))
    assert find_model() == gguf
    with pytest.raises(ConfigurationError, match="no model file at"):
        find_model(tmp_path / "missing.gguf")


def test_a_missing_model_says_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTNB_GGUF", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ConfigurationError, match=f"{GGUF_NAME}.*agentnb.models.local fetch"):
        find_model()


def test_one_server_two_aliases_and_the_models_it_hands_out(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    server = LocalServer(gguf, port=18080)
    config = server.config()
    assert config["host"] == "127.0.0.1" and config["port"] == 18080
    formats = {m["model_alias"]: m.get("chat_format") for m in config["models"]}
    assert formats.pop(server.nonce) is None  # the nonce alias readiness is checked against
    assert formats == ALIASES == {"smollm2": None, "smollm2-tools": "chatml-function-calling"}
    assert all(m["n_ctx"] == 4096 and m["n_threads"] == 1 for m in config["models"])
    model = server.model("smollm2-tools")
    assert (
        model.base_url == "http://127.0.0.1:18080/v1" and model.profile.name == "llama-cpp-python"
    )
    assert model.params["temperature"] == 0 and isinstance(model.timeout, httpx.Timeout)
    with pytest.raises(ConfigurationError, match="unknown alias"):
        server.model("gpt-4")
    assert "stopped" in repr(server) and not server.running
    server.stop()  # stopping a server that never started is fine


def test_the_serve_command_serves_until_interrupted():
    """Issue 30: `python -m agentnb.models.local serve` was advertised but exited 2."""
    import signal
    import subprocess
    import sys

    import httpx
    import pytest

    pytest.importorskip("llama_cpp", reason="the `local` extra is not installed: make local")
    with subprocess.Popen(
        [sys.executable, "-m", "agentnb.models.local", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        line = child.stdout.readline()
        base_url = line.split(" at ", 1)[1].split(" ", 1)[0]
        body = {
            "model": "smollm2",
            "max_tokens": 4,
            "messages": [{"role": "user", "content": "Hi"}],
        }
        answer = httpx.post(f"{base_url}/chat/completions", json=body, timeout=120)
        assert answer.status_code == 200 and answer.json()["choices"][0]["message"]
        child.send_signal(signal.SIGINT)
        assert child.wait(30) == 0
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{base_url}/models", timeout=2)
