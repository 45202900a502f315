"""Every notebook runs clean in the environment `make lab` creates (no `local` extra).

One nbmake run per notebook in that venv (see conftest.py), so a failure names its notebook.
`make test-notebooks` runs this; the unit tier skips it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.notebooks.labenv import ROOT, ipython_dir, plain_env

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.notebooks

#: One module of each extra `make lab` leaves out: local (llama.cpp), mcp, service, dev.
# (`mcp` is in the lab env now: openai-agents, which notebook 14 runs, depends on it.)
NOT_IN_LAB = ("llama_cpp", "dbos", "hypothesis", "playwright")


def test_the_lab_environment_is_what_make_lab_installs(lab_python: Path):
    code = (
        "import importlib.util as u, agentnb, pathlib;"
        f"print([m for m in {NOT_IN_LAB!r} if u.find_spec(m)]);"
        "print(pathlib.Path(agentnb.__file__).parents[1])"
    )
    out = subprocess.run(
        [str(lab_python), "-c", code], capture_output=True, text=True, check=True, env=plain_env()
    ).stdout.split("\n")
    assert out[0] == "[]", f"the lab env has extras `make lab` does not install: {out[0]}"
    assert Path(out[1]) == ROOT  # this checkout, editable


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_the_notebook_runs_clean_in_the_lab_environment(lab_python: Path, notebook: str):
    ini = lab_python.parents[1] / "pytest.ini"
    options = ["--nbmake", "--nbmake-timeout=300", "-q", "-p", "no:cacheprovider", "-c", str(ini)]
    done = subprocess.run(
        [
            str(lab_python),
            "-m",
            "pytest",
            *options,
            "--rootdir",
            str(ROOT),
            f"notebooks/{notebook}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**plain_env(), "IPYTHONDIR": ipython_dir(lab_python)},
        timeout=600,
    )
    assert done.returncode == 0, f"{notebook} fails under `make lab`:\n{done.stdout[-6000:]}"
