"""The real-browser tier: one JupyterLab server and one Chromium for the whole session (for
each worker: `make test-browser` runs two, a test file on one worker; free ports, own folders).

Skipped (with the reason) when Chromium or the playwright package is missing: `make test`
installs both (`make test-browser`), a plain `pytest tests` on a bare machine does not.
"""

from __future__ import annotations

import os

import pytest

from tests.browser.lab import CHROMIUM, Lab, chromium, running_lab

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing: run `make test-browser`", allow_module_level=True)
pytest.importorskip("playwright", reason="the playwright package is missing: `make dev`")


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory):
    with running_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="session")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1200}, locale="zh-CN")
    yield ctx
    ctx.close()


__all__ = ["Lab"]
