"""The local server trusted any answer on its port (hostile round 3, class 5): with the port
taken it reported "running" and talked to another process, two servers on one port both
started, and a killed kernel left the server and its temp dir behind. These run a stand-in
server command (fake_llama.py), so they need neither llama.cpp nor the model."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from agentnb.errors import ConfigurationError
from agentnb.models.local import LocalServer
from agentnb.models.local import server as server_module
from tests.helpers import eventually_sync

FAKE = str(Path(__file__).with_name("fake_llama.py"))


class Fake(LocalServer):
    silent = False

    def command(self, config: Path) -> list[str]:
        return [sys.executable, FAKE, "--config_file", str(config)] + (
            ["--silent"] if self.silent else []
        )


def fake(tmp_path: Path, **options) -> Fake:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF")
    return Fake(weights, ready_timeout=options.pop("ready_timeout", 20), **options)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_port_taken_a_stand_in_server_starts_and_is_verified_as_ours(tmp_path):
    with fake(tmp_path) as server:
        assert server.running
        assert f'"{server.nonce}"' in (Path(server._dir.name) / "config.json").read_text()


def test_port_taken_by_another_process_is_refused_not_talked_to(tmp_path):
    port = free_port()
    with socket.socket() as other:
        other.bind(("127.0.0.1", port))
        other.listen()
        server = fake(tmp_path, port=port)
        with pytest.raises(ConfigurationError, match="taken by another process"):
            server.start()
        assert not server.running


def test_port_taken_two_servers_on_one_port_only_the_first_starts(tmp_path):
    port = free_port()
    with fake(tmp_path, port=port) as first:
        with pytest.raises(ConfigurationError, match="held by another agentnb LocalServer"):
            fake(tmp_path, port=port).start()
        assert first.running
    with fake(tmp_path, port=port) as again:  # the lock went with the first
        assert again.running


def test_port_taken_an_impostor_that_wins_the_race_is_never_trusted(tmp_path, monkeypatch):
    port = free_port()
    listing = {"data": [{"id": a, "owned_by": "me"} for a in ("smollm2", "smollm2-tools")]}

    class Impostor(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(listing).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    impostor = HTTPServer(("127.0.0.1", port), Impostor)
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    monkeypatch.setattr(server_module, "port_free", lambda port: True)  # lost the race
    server = fake(tmp_path, port=port, ready_timeout=2)
    server.silent = True
    try:
        with pytest.raises(ConfigurationError, match="did not answer in time"):
            server.start()
        assert not server.running
    finally:
        impostor.shutdown()
        impostor.server_close()


KERNEL = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from test_local_ownership import fake
server = fake(Path(sys.argv[2])).start()
print(server.process.pid, server._dir.name, flush=True)
import os, signal
os.kill(os.getpid(), signal.SIGKILL)  # the kernel dies: no stop(), no atexit
"""


def test_kernel_death_leaves_no_server_and_no_temp_dir_behind(tmp_path):
    here = str(Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", KERNEL, here, str(tmp_path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    pid, folder = done.stdout.split()

    def gone() -> bool:
        with contextlib.suppress(ChildProcessError):  # a zombie re-parented to us
            os.waitpid(int(pid), os.WNOHANG)
        return not alive(int(pid))

    eventually_sync(gone, 10, what="the server's end with the kernel")
    from agentnb.models.local.ownership import reap  # the next start runs it

    assert Path(folder) in reap() and not Path(folder).exists()
