"""What a :class:`~agentnb.models.local.server.LocalServer` owns: its port and its process.

A server on loopback is trusted only when it is ours, so starting one:

* takes a lock per port (:func:`port_lock`, ``flock`` on a file under the temp dir): two
  servers in two kernels can never both report "started" on one port;
* checks that the port can be bound before the process starts (:func:`port_free`): a port
  taken by anything else is refused, never talked to;
* gives the server a nonce model alias and its own process: readiness is a ``/v1/models``
  listing that names the nonce, from a port the server's own PID listens on
  (:func:`listening_pid`, read from ``/proc`` where it exists);
* ties the server's life to the kernel's: the server gets ``PR_SET_PDEATHSIG`` (Linux: it is
  sent SIGTERM when the process that started it dies) and a session of its own, and its
  temp dir records who started it, so :func:`reap` (run at every start) stops servers whose
  starter is gone and removes their temp dirs;
* starts the server without the environment variables it would take over its config
  (:func:`server_env`): ``PORT`` in the kernel's environment must not move it off its port.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import IO

import httpx

__all__ = [
    "PREFIX",
    "answers_as",
    "listening_pid",
    "parent_death_signal",
    "port_free",
    "port_lock",
    "reap",
    "server_env",
]

#: Temp dirs of local servers start with this; each holds ``owner.json``.
PREFIX = "agentnb-llama-"


def port_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port`` (a bind with SO_REUSEADDR, as servers
    bind: it fails on a listener, not on connections lingering in TIME_WAIT)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def port_lock(port: int) -> IO[str] | None:
    """An open, exclusively locked file for ``port`` (keep it open while serving), or None
    when another server holds the port's lock."""
    path = Path(tempfile.gettempdir()) / f"agentnb-port-{port}.lock"
    handle = path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def parent_death_signal() -> None:
    """``preexec_fn`` of the server: SIGTERM when its starter dies (Linux), in a session of
    its own (so a Ctrl-C in the kernel does not reach it)."""
    os.setsid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def listening_pid(port: int) -> set[int] | None:
    """PIDs with a socket listening on ``port`` (None when ``/proc`` cannot tell)."""
    inodes: set[str] = set()
    try:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with contextlib.suppress(FileNotFoundError), open(table) as f:
                for line in list(f)[1:]:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        if not inodes:
            return set()
        pids = set()
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if link.startswith("socket:[") and link[8:-1] in inodes:
                        pids.add(int(pid))
        return pids
    except (OSError, ValueError, IndexError):
        return None


def answers_as(base_url: str, nonce: str, pid: int) -> bool:
    """Whether the server at ``base_url`` is ours: its listing names ``nonce`` and, where
    ``/proc`` can tell, process ``pid`` is the one listening."""
    try:
        answer = httpx.get(f"{base_url}/models", timeout=1.0)
        listing = answer.json() if answer.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return False
    data = listing.get("data") if isinstance(listing, dict) else None
    models = data if isinstance(data, list) else []
    if nonce not in {m.get("id") for m in models if isinstance(m, dict)}:
        return False
    pids = listening_pid(int(httpx.URL(base_url).port or 80))
    return pids is None or pid in pids


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_owner(folder: Path, server_pid: int) -> None:
    record = {"starter": os.getpid(), "server": server_pid}
    (folder / "owner.json").write_text(json.dumps(record))


def reap() -> list[Path]:
    """Stop local servers whose starter died and remove their temp dirs; returns the dirs."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        try:
            record = json.loads((folder / "owner.json").read_text())
            starter, server = int(record["starter"]), int(record["server"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being set up, or not ours
        if alive(starter):
            continue
        if alive(server) and str(folder) in _cmdline(server):  # still the server we started
            with contextlib.suppress(OSError):
                os.killpg(server, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


#: llama_cpp.server reads its settings from the environment too (pydantic-settings, any
#: case), and an environment variable beats the config file: ``PORT`` (which ``make lab
#: PORT=8890`` exports and many container hosts set) would move the server off the port this
#: process claimed. The server is started without them.
SERVER_SETTINGS = frozenset(
    (
        "port",
        "host",
        "config_file",
        "model",
        "model_alias",
        "n_ctx",
        "n_threads",
        "n_threads_batch",
        "n_batch",
        "n_gpu_layers",
        "chat_format",
        "api_key",
        "verbose",
        "ssl_keyfile",
        "ssl_certfile",
        "interrupt_requests",
        "disable_ping_events",
        "root_path",
        "models",
    )
)


def server_env() -> dict[str, str]:
    """This process's environment without the variables llama_cpp.server would take as
    its settings (see :data:`SERVER_SETTINGS`)."""
    return {k: v for k, v in os.environ.items() if k.lower() not in SERVER_SETTINGS}
