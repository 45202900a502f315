"""Stands in for ``python -m llama_cpp.server --config_file PATH`` in ownership tests: it
serves ``GET /v1/models`` listing the config's aliases on the config's host and port (or
those of ``HOST`` / ``PORT`` in its environment, as llama_cpp.server takes them; with
``--silent``, binds nothing and just waits)."""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

config = json.loads(Path(sys.argv[sys.argv.index("--config_file") + 1]).read_text())
if "--silent" in sys.argv:
    time.sleep(3600)
listing = {"object": "list", "data": [
    {"id": m["model_alias"], "object": "model", "owned_by": "me"} for m in config["models"]
]}  # fmt: skip


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(listing).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


# As llama_cpp.server's settings do (pydantic-settings, any case): the environment beats the
# config file.
env = {k.lower(): v for k, v in os.environ.items()}
host, port = env.get("host", config["host"]), int(env.get("port", config["port"]))
HTTPServer((host, port), Handler).serve_forever()
