"""Every notebook runs clean in the environment `make lab` creates (no `local` extra), ends by
printing "all checks passed", and says what it ran (notebook 10's prose against its run).

One nbmake run per notebook in that venv (see conftest.py), so a failure names its notebook.
`make test-notebooks` runs this; the unit tier skips it.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tests.notebooks.curriculum import LAST_LINE, cells, heading_text
from tests.notebooks.labenv import ROOT, plain_env

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.notebooks

#: One module of each extra `make lab` leaves out: local (llama.cpp), mcp, service, dev.
# (`mcp` is in the lab env now: openai-agents, which notebook 15 runs, depends on it.)
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
def test_the_notebook_runs_clean_in_the_lab_environment(executed, notebook: str):
    run = executed(notebook)
    assert run.returncode == 0, f"{notebook} fails under `make lab`:\n{run.report}"


def text(output: dict) -> str:
    value = output.get("text", "")
    return "".join(value) if isinstance(value, list) else value


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_all_checks_passed_is_the_last_output(executed, notebook: str):
    """Nothing after the checks: no solution output, no warning, no late print."""
    run = executed(notebook)
    outputs = [o for c in run.notebook["cells"] for o in c.get("outputs", [])]
    assert outputs, f"{notebook} printed nothing"
    last = outputs[-1]
    assert last["output_type"] == "stream" and last["name"] == "stdout", last
    # A busy kernel may flush one print as two stream messages ("all checks passed", then "\n"):
    # read the trailing run of stdout outputs as the one text it is.
    tail = ""
    for output in reversed(outputs):
        if output["output_type"] != "stream" or output["name"] != "stdout":
            break
        tail = text(output) + tail
    assert tail.rstrip("\n").splitlines()[-1] == LAST_LINE, tail[-300:]


# -- notebook 10: the prose says how the mixed runs ended; the run must agree ----------------
STOP_REASONS = {"final_answer", "max_iterations", "repeated_action", "token_budget", "custom"}
STOP_REASONS |= {"cancelled", "error"}


def claimed(markdown: str) -> tuple[set[str], set[str]]:
    """(stop reasons, exception names) a paragraph names in backticks."""
    named = set(re.findall(r"`([A-Za-z_]+)`", markdown))
    errors = {n for n in named if re.fullmatch(r"[A-Z]\w+(Error|Conversation|Busy|Conflict)", n)}
    return named & STOP_REASONS, errors


def ended(stdout: str) -> list[tuple[str, str]]:
    line = next(x for x in stdout.splitlines() if x.startswith("how each run ended:"))
    return list(ast.literal_eval(line.split(":", 1)[1].strip()))


def test_notebook_09_says_how_its_mixed_runs_ended(executed):
    name = "10_concurrency.ipynb"
    run = executed(name)
    assert run.returncode == 0, run.report
    all_cells = cells(name)
    section = next(c.index for c in all_cells if c.headings[:1] and "The failure" in c.headings[0])
    end = next(
        c.index for c in all_cells[section + 1 :] if c.headings[:1] and c.headings[0][:3] == "## "
    )
    compared = 0
    for cell in all_cells[section:end]:
        stdout = "".join(text(o) for o in run.outputs(cell.index) if o.get("name") == "stdout")
        if cell.kind != "code" or "how each run ended:" not in stdout:
            continue
        prose = next(c for c in all_cells[cell.index + 1 :] if c.kind == "markdown")
        first_paragraph = prose.source.split("\n\n")[0]
        reasons, exceptions = claimed(first_paragraph)
        outcome = ended(stdout)
        assert reasons == {reason for _, reason in outcome}, (first_paragraph, outcome)
        assert exceptions == {kind for kind, _ in outcome if kind != "RunResult"}, (
            first_paragraph,
            outcome,
        )
        compared += 1
    heading = heading_text(all_cells[section].headings[0])
    assert compared == 2, f"expected two mixed runs under {heading!r}"
