"""Public seams, not private reach: a name with a leading underscore is its module's own.

Counted across the package, read from the source:

* a private name imported from another module (``from ..events import _encode``);
* a private attribute read or written on another module's object (``request._spans``,
  ``ev._add(...)``, ``model._transport = ...``): an attribute ``_x`` used on anything but
  ``self``/``cls``, in a module whose own classes do not define ``_x``;
* a module of another package's subpackage (``from ..models.openai.wire import ...``): a
  subpackage shows what it offers in its ``__init__``'s ``__all__``.

Not counted: agentnb's own shared private modules (``_json``, ``_html``, ``_secrets``, ...,
the layer everything stands on), the display protocol (``_repr_mimebundle_``) and the
documented API of named tuples (``_replace``, ``_asdict``). Sites in other engineers' folders
wait in :data:`ALLOWED`, each naming the branch that removes it; the lead deletes an entry
when that branch is merged, and an entry that allows nothing fails the test.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Mapping

from tests.test_boundaries import SOURCES

#: Private attributes everyone may use: the display protocol, the named tuple API.
PUBLIC_BY_CONVENTION = {
    "_repr_mimebundle_",
    "_repr_html_",
    "_replace",
    "_asdict",
    "_fields",
    "_make",
}


#: (module, private name) -> why it is still reached for. Only sites in other folders.
ALLOWED: dict[tuple[str, str], str] = {}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_BY_CONVENTION


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _defined(tree: ast.Module) -> set[str]:
    """Private attribute names a module's own classes define (methods, class attributes,
    ``__slots__``, fields, and ``self._x = ...``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    for target in item.targets:
                        if isinstance(target, ast.Name):
                            names.add(target.id)
                            if target.id == "__slots__" and isinstance(item.value, ast.Tuple):
                                names |= {
                                    e.value
                                    for e in item.value.elts
                                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                                }
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
    return {n for n in names if _private(n)}


def _exports(tree: ast.Module) -> set[str]:
    """The names a module's literal ``__all__`` lists."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return set(value)
    return set()


def reaches(sources: Mapping[str, str]) -> list[tuple[str, str, int, str]]:
    """Every private reach: (module, name, line, what), ``name`` the private name or the
    module reached into."""
    trees = {name: ast.parse(src) for name, src in sources.items()}
    owners: dict[str, set[str]] = defaultdict(set)
    for name, tree in trees.items():
        for attr in _defined(tree):
            owners[attr].add(name)
    found = []
    for module, tree in trees.items():
        own = _defined(tree)
        parts = module.split(".")
        is_package = any(other.startswith(module + ".") for other in sources)
        package = parts if is_package else parts[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                base = node.value
                if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                    continue
                if isinstance(base, ast.Call) and ast.unparse(base.func) == "super":
                    continue
                if node.attr in owners and node.attr not in own:
                    where = ", ".join(sorted(owners[node.attr]))
                    found.append((module, node.attr, node.lineno, f"{ast.unparse(node)} ({where})"))
            elif isinstance(node, ast.ImportFrom) and node.level:
                head = ".".join(
                    [
                        *package[: len(package) - node.level + 1],
                        *([node.module] if node.module else []),
                    ]
                )
                for alias in node.names:
                    if _private(alias.name) and f"{head}.{alias.name}" not in sources:
                        found.append(
                            (module, alias.name, node.lineno, f"from {head} import {alias.name}")
                        )
                sub = ".".join(head.split(".")[:3])  # agentnb.<package>.<subpackage>
                if sub != head and sub in sources and _package(sub) != _package(module):
                    shown = _exports(trees[sub])
                    hidden = [a.name for a in node.names if a.name not in shown]
                    if hidden:
                        what = f"from {head} import {', '.join(hidden)} (not in {sub}.__all__)"
                        found.append((module, head, node.lineno, what))
    return found


def test_no_private_name_or_attribute_is_reached_across_modules():
    found = [r for r in reaches(SOURCES) if (r[0], r[1]) not in ALLOWED]
    assert not found, "private reach across modules:\n" + "\n".join(
        f"{m}:{line}: {what}" for m, _, line, what in found
    )


def test_every_allowed_reach_is_still_there():
    present = {(r[0], r[1]) for r in reaches(SOURCES)}
    stale = sorted(set(ALLOWED) - present)
    assert not stale, f"ALLOWED lists reaches that are gone (delete them): {stale}"


def test_the_check_catches_each_kind_of_reach():
    sources = {
        "agentnb": "",
        "agentnb.events": "def _encode(x):\n    return x\n",
        "agentnb.models": "",
        "agentnb.models.request": "class ModelRequest:\n    __slots__ = ('_spans',)\n",
        "agentnb.models.openai": "from .client import OpenAIModel\n__all__ = ['OpenAIModel']\n",
        "agentnb.models.openai.client": "class OpenAIModel:\n    def __init__(self):\n        self._transport = None\n",
        "agentnb.models.openai.wire": "def parse_completion(data):\n    return data\n",
        "agentnb.storage": "",
        "agentnb.storage.codec": "from ..events import _encode\n"
        "def spans(request):\n    return request._spans\n",
        "agentnb.models.replay": "def record(model, t):\n    model._transport = t\n",
        "agentnb.observe": "",
        "agentnb.observe.record": "from ..models.openai.wire import parse_completion\n",
        "agentnb.widgets": "def show(view):\n    return view._repr_mimebundle_()\n",
    }
    found = sorted((m, n) for m, n, _, _ in reaches(sources))
    assert found == [
        ("agentnb.models.replay", "_transport"),
        ("agentnb.observe.record", "agentnb.models.openai.wire"),
        ("agentnb.storage.codec", "_encode"),
        ("agentnb.storage.codec", "_spans"),
    ], found
