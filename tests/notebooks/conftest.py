"""The environment `make lab` creates, for running the notebooks as a newcomer would.

`make lab` installs ``.[notebooks]`` and nothing else: no ``dev``, no ``local`` (llama.cpp),
no ``mcp``. The dev venv has all of them, so a notebook that leans on one passes there and
fails for the user. This builds that environment once per pyproject.toml (a venv under
``~/.cache/agentnb/lab-env/``, the package installed editable, so code changes need no
reinstall) plus nbmake to run the notebooks; uv makes a rebuild take seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.notebooks.labenv import lab_env


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "notebooks: runs notebooks in the `make lab` environment")


@pytest.fixture(scope="session")
def lab_python() -> Path:
    return lab_env()
