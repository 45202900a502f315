"""``agentnb.service`` loads on first use: ``import agentnb`` pays nothing for it."""

from __future__ import annotations

import subprocess
import sys


def _loaded(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
    )
    names = [line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line]
    return [n for n in names if n == "agentnb.service" or n.startswith("agentnb.service.")]


def test_import_agentnb_loads_no_service_module() -> None:
    assert _loaded("import agentnb") == []


def test_the_service_names_load_on_first_use() -> None:
    assert "agentnb.service.runtime" in _loaded("import agentnb as an; an.Runtime")
    import agentnb as an
    from agentnb.service import QueueFull, Runtime, TaskInfo, TaskNotFound

    assert (an.Runtime, an.QueueFull, an.TaskInfo, an.TaskNotFound) == (
        Runtime,
        QueueFull,
        TaskInfo,
        TaskNotFound,
    )
    assert an.Runtime.__module__ == "agentnb"  # the public path in reprs
