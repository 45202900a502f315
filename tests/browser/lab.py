"""JupyterLab on 127.0.0.1 and Debian's Chromium driven by Playwright (Python).

Used by the browser tests (tests/browser) and by ``scripts/bench_view.py``. Chromium is
``/usr/bin/chromium`` through ``executable_path``: never ``playwright install``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = ROOT / ".artifacts" / "screenshots"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
#: Settings for a quiet, predictable Lab: no news pop-up, every cell rendered.
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lab:
    """A JupyterLab server in ``root`` (a temporary folder); ``url(path)`` opens a notebook."""

    def __init__(self, root: Path, settings: Path | None = None) -> None:
        self.root = root
        self.settings = settings  # a JUPYTERLAB_SETTINGS_DIR to use instead of SETTINGS
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> None:
        state = self.root / ".state"
        settings = self.settings or state / "settings"
        if self.settings is None:
            for name, value in SETTINGS.items():
                path = settings / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(value))
        state.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(state / "workspaces"),
            "JUPYTER_CONFIG_DIR": str(state / "config"),
            "IPYTHONDIR": str(state / "ipython"),
            "NO_COLOR": "1",
        }
        jupyter = Path(sys.executable).parent / "jupyter"
        cmd = [
            str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}", "--LabApp.expose_app_in_browser=True",
        ]  # fmt: skip
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self.log = open(state / "lab.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: see {state / 'lab.log'}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2)
                return
            time.sleep(0.3)
        raise TimeoutError(f"jupyter lab did not answer in {timeout} s")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """A fresh workspace per page, so Lab does not reopen what another test opened."""
        return f"{self.base}/lab/workspaces/{secrets.token_hex(4)}/tree/{path}?token={self.token}"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()

    def write_notebook(self, name: str, cells: list[str]) -> str:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = KERNELSPEC
        nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
        nbformat.write(nb, self.root / name)
        return name


@contextlib.contextmanager
def running_lab(root: Path, settings: Path | None = None) -> Iterator[Lab]:
    lab = Lab(root, settings)
    lab.start()
    try:
        yield lab
    finally:
        lab.stop()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


# -- driving a notebook through window.jupyterapp --------------------------------------------
_READY = """() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
    && panel.sessionContext.session.kernel;
  return Boolean(kernel && kernel.status === 'idle' && panel.content.widgets.length);
}"""

_RUN = """async (i) => {
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  nb.activeCellIndex = i;
  nb.deselectAll();
  await app.commands.execute('notebook:run-cell');
  return nb.widgets[i].model.outputs.toJSON();
}"""


class Notebook:
    """An open notebook page: run its cells one at a time, find their outputs."""

    def __init__(self, page: Any, lab: Lab, name: str) -> None:
        self.page = page
        page.goto(lab.url(name))
        page.wait_for_function(_READY, timeout=90_000, polling=200)

    def run(self, i: int, *, check: bool = True) -> list[dict[str, Any]]:
        """Run cell ``i`` and wait until it finishes; raise on an error output."""
        outputs: list[dict[str, Any]] = self.page.evaluate(_RUN, i)
        if check:
            for out in outputs:
                if out.get("output_type") == "error":
                    raise AssertionError(f"cell {i}: {out['ename']}: {out['evalue']}")
        return outputs

    def stdout(self, i: int) -> str:
        """Only the stdout stream of cell ``i`` (never a traceback, which repeats the source)."""
        outputs = self.page.evaluate(
            "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs.toJSON()",
            i,
        )
        return "".join(
            "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
            for o in outputs
            if o.get("output_type") == "stream" and o.get("name") == "stdout"
        )

    def output(self, i: int) -> Any:
        """The output area of cell ``i`` (a Playwright locator)."""
        return self.page.locator(".jp-Notebook .jp-Cell").nth(i).locator(".jp-OutputArea")

    def shot(self, name: str, locator: Any = None) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        (locator or self.page).screenshot(path=str(path))
        return path


@contextlib.contextmanager
def opened(lab: Lab, context: Any, name: str, cells: list[str]) -> Iterator[Notebook]:
    """A notebook of ``cells`` written into ``lab`` and open in a new page of ``context``;
    its first cell (the set-up) has run and printed ``ready``. The page closes afterwards."""
    page = context.new_page()
    try:
        notebook = Notebook(page, lab, lab.write_notebook(name, cells))
        notebook.run(0)
        assert "ready" in notebook.stdout(0), notebook.stdout(0)
        yield notebook
    finally:
        page.close()
