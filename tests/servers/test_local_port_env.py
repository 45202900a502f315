"""PORT in the kernel's environment (``make lab PORT=8890``, container hosts) must not move the
local server off the port agentnb chose: llama_cpp.server takes ``$PORT`` over its config."""

from __future__ import annotations

import socket

from agentnb.models.local.ownership import server_env
from tests.servers.test_local_ownership import fake


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_port_variable_never_steals_the_local_servers_port(tmp_path, monkeypatch):
    elsewhere = free_port()
    monkeypatch.setenv("PORT", str(elsewhere))
    monkeypatch.setenv("host", "0.0.0.0")  # any case, as pydantic-settings reads it
    monkeypatch.setenv("AGENTNB_KEEP", "1")
    env = server_env()
    assert "PORT" not in env and "host" not in env and env["AGENTNB_KEEP"] == "1"
    with fake(tmp_path, ready_timeout=10) as server:  # failed: the server listened on $PORT
        assert server.running and server.port != elsewhere
