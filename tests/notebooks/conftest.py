"""The environment `make lab` creates, for running the notebooks as a newcomer would.

`make lab` installs ``.[notebooks]`` and nothing else: no ``dev``, no ``local`` (llama.cpp),
no ``mcp``. The dev venv has all of them, so a notebook that leans on one passes there and
fails for the user. This builds that environment once per pyproject.toml (a venv under
``~/.cache/agentnb/lab-env/``, the package installed editable, so code changes need no
reinstall) plus nbmake to run the notebooks; uv makes a rebuild take seconds.

``executed(name)`` runs a notebook there once per test session — a copy in a temporary
folder, so the outputs never touch the committed file — and returns nbmake's exit status,
its report and the executed notebook, for the tests that read what a notebook printed. The
first call starts every notebook, two at a time (one kernel a core: each notebook has its own
folder, kernel and files, and binds no fixed port), in the order the tests ask for them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.notebooks.labenv import ROOT, ipython_dir, lab_env, plain_env


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "notebooks: runs notebooks in the `make lab` environment")


@pytest.fixture(scope="session")
def lab_python() -> Path:
    return lab_env()


@dataclass(frozen=True)
class Executed:
    """One nbmake run of a notebook in the lab environment."""

    name: str
    returncode: int
    report: str
    notebook: dict[str, Any]

    def outputs(self, index: int) -> list[dict[str, Any]]:
        return list(self.notebook["cells"][index].get("outputs", []))


def _run(lab_python: Path, folder: Path, name: str) -> Executed:
    copy = folder / name
    shutil.copy(ROOT / "notebooks" / name, copy)
    ini = lab_python.parents[1] / "pytest.ini"
    options = ["--nbmake", "--nbmake-timeout=300", "--overwrite", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [str(lab_python), "-m", "pytest", *options, "-c", str(ini), "--rootdir", str(folder), name],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**plain_env(), "IPYTHONDIR": ipython_dir(lab_python)},
        timeout=600,
    )
    notebook = json.loads(copy.read_text(encoding="utf-8"))
    return Executed(name, done.returncode, done.stdout[-6000:], notebook)


#: Notebooks run at once (AGENTNB_NOTEBOOK_WORKERS overrides: 1 runs them one by one).
WORKERS = int(os.environ.get("AGENTNB_NOTEBOOK_WORKERS", min(2, os.cpu_count() or 1)))


@pytest.fixture(scope="session")
def executed(
    lab_python: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Callable[[str], Executed]]:
    """``executed("10_concurrency.ipynb")``: the notebook run once in the lab env, cached.
    The first call starts every notebook this session's tests name (``WORKERS`` at a time),
    in the order they will ask for them."""
    runs: dict[str, Future[Executed]] = {}
    pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="notebook")
    named = [getattr(item, "callspec", None) for item in request.session.items]
    wanted = [c.params["notebook"] for c in named if c is not None and "notebook" in c.params]

    def start(name: str) -> Future[Executed]:
        if name not in runs:
            folder = tmp_path_factory.mktemp(Path(name).stem)
            runs[name] = pool.submit(_run, lab_python, folder, name)
        return runs[name]

    def run(name: str) -> Executed:
        if not runs:
            for each in [name, *wanted]:
                start(each)
        return start(name).result()

    yield run
    pool.shutdown(cancel_futures=True)
