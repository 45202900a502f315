"""The architecture, held by tests: small modules, one-way imports, the drawn error tree."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import agentnb as an
from agentnb import errors

PACKAGE = Path(an.__file__).parent


def _modules(path: Path) -> set[str]:
    """Every module a file imports, absolute, resolving relative imports against the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts[: len(parts) - node.level]
                found.add(".".join([*base, node.module] if node.module else base))
                found |= {".".join([*base, a.name]) for a in node.names if not node.module}
            elif node.module:
                found.add(node.module)
    return found


def test_every_module_is_at_most_300_lines():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300
    }
    assert not long, f"split these modules (DESIGN.md: each <= 300 lines): {long}"


def test_the_runtime_imports_neither_travel_nor_widgets_nor_jupyter():
    banned = ("agentnb.travel", "agentnb.widgets", "IPython", "ipywidgets", "anywidget",
              "ipykernel", "traitlets", "jupyter")  # fmt: skip
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).parts
        if rel[0] in ("travel", "widgets", "__main__.py"):  # the example domain, views, the CLI
            continue
        bad = {m for m in _modules(path) if m.startswith(banned)}
        assert not bad, f"{'/'.join(rel)} imports {sorted(bad)}"


def test_import_agentnb_loads_no_jupyter_and_no_pandas():
    code = (
        "import sys, agentnb\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'IPython', 'ipywidgets', 'anywidget', 'ipykernel', 'pandas'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_the_exception_tree_in_errors_py_matches_the_classes():
    doc = inspect.getdoc(errors) or ""
    drawn: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        match = re.match(r"^([ │├└─]*?)(\w+)(\s{2,}.*)?$", line)
        if not match or not match.group(2)[0].isupper() or not hasattr(errors, match.group(2)):
            continue
        depth = len(match.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            drawn[match.group(2)] = stack[-1][1]
        stack.append((depth, match.group(2)))
    classes = {
        name: obj
        for name in errors.__all__
        if isinstance(obj := getattr(errors, name), type) and name != "AgentnbError"
    }
    assert set(drawn) == set(classes), set(drawn) ^ set(classes)
    for name, parent in drawn.items():
        direct = [b.__name__ for b in classes[name].__bases__ if issubclass(b, errors.AgentnbError)]
        assert direct == [parent], f"{name}: drawn under {parent}, defined under {direct}"
