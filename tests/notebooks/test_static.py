"""The curriculum's promises a learner can check without running anything (issue 31).

Every check can fail: no assert of a known tautological form; "all checks passed" printed by
the last statement of the last cell, right under its "## Checks" heading; headings that
open their sections; an exercise with a hidden solution; at most 30 cells; the metadata
JupyterLab writes (so a notebook opens unmodified); the language a reader needs; no
citation of a design document that is not in the repository. No kernel, so this runs in
seconds (`make test-notebooks` runs it first).
"""

from __future__ import annotations

import ast
import re

import pytest

from scripts.check_notebooks import METADATA
from tests.notebooks.curriculum import (
    LAST_LINE,
    MAX_CELLS,
    ROOT,
    asserts,
    cells,
    last_statement,
    names,
    notebook,
    parse,
    prints_last_line,
    tautology,
)

NOTEBOOKS = names()


@pytest.fixture(params=NOTEBOOKS)
def name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_code_cell_parses(name):
    for cell in cells(name):
        if cell.kind == "code":
            parse(cell.source)  # a SyntaxError names the cell


def test_no_tautological_asserts(name):
    found = [
        f"cell {cell.index}: `{ast.unparse(node.test)[:100]}` — {why}"
        for cell, node in asserts(name)
        if (why := tautology(node.test))
    ]
    assert not found, "asserts that cannot fail:\n" + "\n".join(found)


#: Calls whose value is a table or a figure a reader is meant to see.
SHOWN = {"DataFrame", "Series", "to_frame", "head", "describe", "pivot_table", "set_index"}


def _dropped(source: str) -> list[str]:
    """Expressions in the middle of a cell whose value nothing shows (only the last is displayed)."""
    found = []
    for node in parse(source).body[:-1]:
        if not isinstance(node, ast.Expr):
            continue
        value = node.value
        pure = (ast.Name, ast.Attribute, ast.Subscript, ast.Compare, ast.BinOp, ast.Tuple, ast.List)
        table = isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in SHOWN
        if isinstance(value, pure) or table:
            found.append(ast.unparse(node)[:80])
    return found


def test_no_table_built_and_never_shown(name):
    """Issue 42: 04 built the over-budget cost table its prose describes and never displayed it
    (a bare ``pd.DataFrame(...)`` before the cell's last line is computed and thrown away)."""
    found = [
        f"cell {c.index}: `{d}`"
        for c in cells(name)
        if c.kind == "code"
        for d in _dropped(c.source)
    ]
    assert not found, "values built and never shown (display() them):\n" + "\n".join(found)


def test_checks_come_last(name):
    """The last cell prints "all checks passed" as its last statement, and no other cell does."""
    all_cells = cells(name)
    code = [c for c in all_cells if c.kind == "code"]
    last = all_cells[-1]
    assert last.kind == "code", f"the last cell is {last.kind}, not the checks"
    assert last_statement(last) == f"print({LAST_LINE!r})", (
        f"the last cell's last statement is `{last_statement(last)}`"
    )
    others = [c.index for c in code[:-1] if prints_last_line(c)]
    assert not others, f"cells {others} print {LAST_LINE!r} before the last checks"
    assert len(list(asserts(name))) >= 3


def test_the_checks_sit_under_their_heading(name):
    all_cells = cells(name)
    before = all_cells[-2]
    assert before.kind == "markdown" and before.headings[:1] == ["## Checks"], (
        f"cell {before.index} (before the checks) is not the '## Checks' heading"
    )


def test_headings_open_their_sections(name):
    """A heading is the first line of its markdown cell: what follows it is its section."""
    misplaced = [
        f"cell {c.index}: {h!r}"
        for c in cells(name)
        for h in c.headings
        if c.source.strip().splitlines()[0].strip() != h and h.startswith("## ")
    ]
    assert not misplaced, "headings in the middle of a cell:\n" + "\n".join(misplaced)


def test_an_exercise_with_a_hidden_solution(name):
    all_cells = cells(name)
    exercise = [
        c.index for c in all_cells if any(re.match(r"## Exercises?\b", h) for h in c.headings)
    ]
    assert exercise, "no '## Exercise' section"
    solutions = [
        c for c in all_cells if c.index > exercise[0] and "solution" in c.tags and c.kind == "code"
    ]
    assert solutions, "no code cell tagged 'solution' after the exercise"
    assert all(c.hidden for c in solutions), "solutions must be hidden (jupyter.source_hidden)"


def test_at_most_30_cells(name):
    assert len(cells(name)) <= MAX_CELLS


def test_metadata_as_jupyterlab_writes_it(name):
    assert notebook(name)["metadata"] == METADATA


def test_the_intro_names_the_language_a_reader_needs(name):
    intro = cells(name)[0].source
    assert "**Languages:**" in intro, "the intro does not say which languages a reader needs"


def test_no_design_document_outside_the_repository_is_cited(name):
    text = "\n".join(c.source for c in cells(name) if c.kind == "markdown")
    assert not re.search(r"DESIGN|design invariant", text)
    for match in re.finditer(r"invariant (\d+)", text):
        around = text[max(0, match.start() - 120) : match.end() + 120]
        assert "docs/design.md" in around, f"{match.group()} without docs/design.md"


def test_the_readme_cites_only_documents_in_the_repository():
    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    assert "DESIGN" not in readme
    for match in re.finditer(r"invariant (\d+)", readme):
        around = readme[max(0, match.start() - 120) : match.end() + 120]
        assert "design.md" in around, f"{match.group()} without docs/design.md"
    assert (ROOT / "docs" / "design.md").exists()


def test_the_static_checks_can_fail():
    """Each known form is caught; a real check is not."""
    forms = [
        "assert r.stop_reason in an.STOP_REASONS",
        "assert unlocked.problems or len(run_a.tool_calls) == 2",
        "assert True",
        "assert x == x",
        "assert len(xs) >= 0",
        "assert isinstance(r, object)",
    ]
    for form in forms:
        assert tautology(ast.parse(form).body[0].test), form
    for fine in ["assert r.stop_reason == 'error'", "assert 'MU5101' in r.output", "assert x"]:
        assert tautology(ast.parse(fine).body[0].test) is None, fine
