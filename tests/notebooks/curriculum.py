"""Reading the notebooks as data: cells, headings, asserts — for the curriculum's static checks.

No kernel here: these helpers parse the committed ``.ipynb`` files (outputs stripped) so a
test can say what a notebook claims and checks before anything runs.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
LAST_LINE = "all checks passed"
MAX_CELLS = 30


@dataclass(frozen=True)
class Cell:
    index: int
    kind: str  # "code" | "markdown"
    source: str
    metadata: dict[str, Any]

    @property
    def tags(self) -> list[str]:
        return list(self.metadata.get("tags", []))

    @property
    def hidden(self) -> bool:
        return bool(self.metadata.get("jupyter", {}).get("source_hidden"))

    @property
    def headings(self) -> list[str]:
        """The markdown headings of this cell, as written (``## Checks``)."""
        if self.kind != "markdown":
            return []
        return [line.strip() for line in self.source.splitlines() if re.match(r"#{1,6} ", line)]


@cache
def notebook(name: str) -> dict[str, Any]:
    path = NOTEBOOKS / (name if name.endswith(".ipynb") else f"{name}.ipynb")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def names() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


def cells(name: str) -> list[Cell]:
    return [
        Cell(i, c["cell_type"], "".join(c["source"]), c.get("metadata", {}))
        for i, c in enumerate(notebook(name)["cells"])
    ]


def heading_text(heading: str) -> str:
    """``## 1 · The model never calls a tool`` → ``1 · The model never calls a tool``."""
    return heading.lstrip("#").strip()


def headings(name: str) -> list[str]:
    return [heading_text(h) for c in cells(name) for h in c.headings]


def parse(source: str) -> ast.Module:
    """A code cell as Python (top-level ``await`` allowed, as in IPython)."""
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree: ast.Module = compile(source, "<cell>", "exec", flags=flags, dont_inherit=True)
    return tree


def asserts(name: str) -> Iterator[tuple[Cell, ast.Assert]]:
    for cell in cells(name):
        if cell.kind == "code":
            for node in ast.walk(parse(cell.source)):
                if isinstance(node, ast.Assert):
                    yield cell, node


#: The library's vocabularies: every value agentnb can return for the field is in one of them.
VOCABULARIES = {"STOP_REASONS", "ERROR_KINDS", "STAGES", "FAULTS", "MISBEHAVIOURS"}


def _is_vocabulary(node: ast.expr) -> bool:
    """``an.STOP_REASONS``, ``agentnb.ERROR_KINDS``, ``STOP_REASONS``: every value there is."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in VOCABULARIES


def tautology(test: ast.expr) -> str | None:
    """Why an assert's test cannot fail (one of the known forms), or None."""
    if isinstance(test, ast.Constant):
        return "a constant"
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return "`a or b`: passes when either holds, so it does not say which behaviour happened"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        (op,), (right,) = test.ops, test.comparators
        if isinstance(op, ast.In) and _is_vocabulary(right):
            return f"membership in {ast.unparse(right)}: every value the library returns is there"
        if isinstance(op, ast.Eq | ast.Is | ast.GtE | ast.LtE) and ast.dump(test.left) == ast.dump(
            right
        ):
            return "compares an expression with itself"
        if (
            isinstance(op, ast.GtE)
            and isinstance(right, ast.Constant)
            and right.value == 0
            and isinstance(test.left, ast.Call)
            and getattr(test.left.func, "id", "") == "len"
        ):
            return "`len(x) >= 0` always holds"
    if (
        isinstance(test, ast.Call)
        and getattr(test.func, "id", "") == "isinstance"
        and len(test.args) == 2
        and getattr(test.args[1], "id", "") == "object"
    ):
        return "`isinstance(x, object)` always holds"
    return None


def last_statement(cell: Cell) -> str:
    body = parse(cell.source).body
    return ast.unparse(body[-1]) if body else ""


def prints_last_line(cell: Cell) -> bool:
    return cell.kind == "code" and LAST_LINE in cell.source
