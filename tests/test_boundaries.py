"""The architecture, held by tests: small modules, one-way imports, no import cycle but the
documented door, the drawn error tree.

The import checks see every import that can run: at module level, under ``TYPE_CHECKING``,
inside functions, and by name (``importlib.import_module("...")``, ``__import__``). Each
allow-list below says why an entry is there, and a test fails when an entry is no longer
needed, so the lists only shrink. Each check is a function of the sources it reads; the
``test_..._catches_...`` tests feed it a small made-up package holding one violation of its
kind, so no check here can pass by seeing nothing.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import agentnb as an
from agentnb import errors

PACKAGE = Path(an.__file__).parent

#: Modules allowed over 300 lines, each with its reason (DESIGN.md: a size limit with a
#: written reason per exception beats splitting by line count).
LONG_MODULES = {
    "agent.py": "the Agent's settings (each checked when set), the prompt they build, the run "
    "entry points, and copy()/replaying(): the variants an evaluation compares, read as one",
    "evals/evaluation.py": "the Evaluation: the state a sweep fills (records, sessions, traces, "
    "subscribers) and every question asked of it afterwards, each a short delegation to its "
    "module, read as the one public surface of an evaluation",
    "evals/optimise/optimisation.py": "the Optimisation: the state an optimiser run fills "
    "(candidates, history, the incumbent, subscribers, Stop) and every question asked of it "
    "afterwards, each a short delegation to its module, read as the one public surface of a run",
    "evals/tasks.py": "a Task (its fields, each checked when set, and its JSONL record both "
    "ways: checks, hooks, its user) and the TaskSet (by name, JSONL, DataFrames): what an "
    "evaluation runs, read as one definition",
    "events.py": "every event type of the lifecycle and their shared base, read as one list",
    "messages.py": "the Chat Completions message classes and their lossless wire round trip",
    "models/openai/client.py": "one call path for whole and streamed replies, with the one "
    "deadline and the size bounds every phase shares, read as one",
    "models/openai/text_actions.py": "the written forms of an action and the rules for taking "
    "one (its docstring is the spec), read beside the parser that follows them",
    "session/session.py": "the Session and its guarded edits (append, edit, replace, delete, "
    "truncate, repair): every way to change a conversation, read beside the state it guards; "
    "and the stores' way back to a Session (load, import_jsonl, the default MemoryStore), so "
    "session/store.py needs nothing of the Session and the two make no import cycle",
    "models/replay.py": "a cassette's two transports, the recorder and the replayer, and how a "
    "miss differs from what was recorded, in one place so the two cannot drift (the format "
    "itself is models/recorded.py's)",
    "observe/conversations.py": "the threading rule (its docstring is the spec) beside the index "
    "that makes placing a request one lookup per message, read as one",
    "observe/recorder.py": "a proxied call's life as a run, from its request to its stop, in the "
    "order the runtime's stages would record it",
    "observe/otel.py": "one handler per event type, read as the span tree they build",
    "models/wire/responses.py": "one wire format both ways (read by the proxy, written by the "
    "stand-in) in one module, so the two cannot drift",
    "models/wire/anthropic.py": "one wire format both ways (read by the proxy, written by the "
    "stand-in) in one module, so the two cannot drift",
    "service/inprocess.py": "the in-process backend: its queue and workers, each step of a "
    "task's life (begin, start, attempted, end; run_step shares them) and the verbs the "
    "Runtime asks of a backend, read as one",
    "service/runtime.py": "the service's one public class: each verb of its API (submit, "
    "status, wait, gather, result, get_trace, list, session, cancel, run_step, recover, "
    "serve, approve, deny, close), the one finish() every backend ends a task with and what "
    "a change of a task tells its watchers, read as one",
    "widgets/session_view.py": "the live view of one session: its state for late views, each "
    "change as one message, the status line, and what its controls and Approve / Deny send, "
    "read as one",
}

# The layers, lowest first (DESIGN.md "Layout"): an import may only point to its own layer or
# a lower one. `display` is the door every object shows itself through (a message, a session,
# an evaluation): it needs nothing above the lowest layer at run time, so it sits there;
# `storage` (the stores behind the Store seam, the trace codec) needs nothing above the
# session, and the runtime's results are saved through it: it sits right above `session`.
# `provenance` (the one normaliser, the text rule, the detector, values traced to their
# sources) reads wire dicts only and is read by the session (``session.provenance()``), the
# checks (grounded, not_steered) and the views: it sits right above `messages`.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "tokens", "_sdk", "_html", "_settings", "_json", "_secrets", "_fast", "display"),
    ("messages",),
    ("provenance",),
    ("tools",),
    ("models",),
    ("events",),
    ("session",),
    ("storage",),
    ("context",),
    ("runtime",),
    ("agent",),
    ("service", "observe"),
    ("evals",),
    ("testing",),
    ("widgets", "travel"),
    ("__init__", "__main__"),
]

#: `if TYPE_CHECKING:` imports that point up the order, each with a one-line reason.
TYPE_ONLY_UP: dict[tuple[str, str], str] = {
    ("agentnb.runtime.state", "agentnb.agent"): "a run's state reads its agent's settings",
    ("agentnb.runtime.run", "agentnb.agent"): "a run is started by an agent and reads it",
    ("agentnb.runtime.subagent", "agentnb.agent"): "agent.as_tool() runs the agent it is given",
    ("agentnb.session.session", "agentnb.context.memory"): "a session carries its user's memory",
    ("agentnb.display", "agentnb.messages"): "the transcript renderer names the messages it shows",
    ("agentnb.display", "agentnb.session.pairing"): "and the pairing problems it marks",
}

#: Imports inside functions that point up the order, each with its reason. An entry "removed
#: by the <branch> branch" is gone once that branch is merged: the lead deletes it then.
LAZY_UP: dict[tuple[str, str], str] = {
    ("agentnb.display", "agentnb.widgets"): "the display door: the one lookup of the views "
    "(JUPYTER_LOOKUP), the one documented edge from the runtime up to them",
    ("agentnb.messages", "agentnb.tools.results"): "ToolMessage.error reads the failure shape "
    "that tools/results writes: one reader beside its writer",
    ("agentnb.observe.standin", "agentnb.travel"): "the stand-in server serves the travel "
    "domain's TravelModel when it is given no model (observe's folder)",
}

#: Modules that import a module whose name is computed (not a literal), and why.
COMPUTED_IMPORTS: dict[str, str] = {
    "agentnb": "its subpackages on first use (an.travel, an.evals, an.widgets, ...)",
    "agentnb.models": "its own submodules on first use (the HTTP stack costs start-up time)",
    "agentnb.observe": "its own submodules on first use (each needs an extra)",
    "agentnb.service.worker": "the user's agent factory, named on the command line",
    "agentnb.evals.checks.refs": "a user's check function, named in a saved check record "
    "(load(trust=True) only; without it, only a module already imported is read)",
    "agentnb.evals.checks.source": "the modules a trusted saved check's source used "
    "(load(trust=True) only)",
    "agentnb.evals.ci": "the user's variants, named on the eval command line",
    "agentnb.evals.variants": "the base agent and models a variants file names (module:attribute)",
}

#: Imports that may close a runtime import cycle: the documented doors (DESIGN.md, invariant 5).
DOORS: dict[tuple[str, str], str] = {
    ("agentnb.display", "agentnb.widgets"): "the display door: every object shows itself "
    "through agentnb.display, which reaches the views' registry by name, and the views import "
    "the runtime they show",
}

#: Runtime import cycles (at module level or inside a function) allowed for now, each with
#: its reason; the test fails when one is no longer a cycle.
RUNTIME_CYCLES: dict[frozenset[str], str] = {}

#: Names of Jupyter's packages; below `widgets` only these modules reach them (or
#: agentnb.widgets), and only by name: `display`'s lookup is the one place (invariant 5).
JUPYTER = ("IPython", "ipywidgets", "anywidget", "ipykernel", "traitlets", "jupyter")
JUPYTER_LOOKUP: dict[str, str] = {
    "agentnb.display": "the display door: display.bundle / view / has_view reach the views' "
    "registry, display.show(obj) IPython's display: the one lookup",
}


# -- reading the package --------------------------------------------------------------------
@dataclass(frozen=True)
class Import:
    """One import site: ``when`` it runs ("load", "typing" or "call") and ``how`` ("statement",
    "by_name" for a literal name, "computed" when the name is not a literal)."""

    source: str
    target: str
    when: str
    how: str
    line: int

    def __str__(self) -> str:
        kind = {"load": "", "typing": " (TYPE_CHECKING)", "call": " (inside a function)"}
        by = {"statement": "", "by_name": " by name", "computed": " by a computed name"}
        return f"{self.source}:{self.line} imports {self.target}{kind[self.when]}{by[self.how]}"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_sources(root: Path = PACKAGE) -> dict[str, str]:
    """Module name -> source, for every module of the package."""
    return {module_name(p, root): p.read_text(encoding="utf-8") for p in root.rglob("*.py")}


def _package_of(module: str, sources: Mapping[str, str]) -> list[str]:
    """The package a module's relative imports start from (itself, for a package)."""
    parts = module.split(".")
    is_package = any(other.startswith(module + ".") for other in sources) or module == "agentnb"
    return parts if is_package else parts[:-1]


def exported(module: str, sources: Mapping[str, str]) -> frozenset[str]:
    """The names ``module`` binds to something other than its own submodule: imported from
    one of its modules (``from .replaying import replaying``) or defined there."""
    return _exported(sources.get(module, ""))


@functools.cache
def _exported(source: str) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return frozenset(names)


def _package_of(module: str, sources: Mapping[str, str]) -> list[str]:
    """The package a module's relative imports start from (itself, for a package)."""
    parts = module.split(".")
    is_package = any(other.startswith(module + ".") for other in sources) or module == "agentnb"
    return parts if is_package else parts[:-1]


_IMPORTERS = {"import_module", "__import__"}


def imports(module: str, source: str, sources: Mapping[str, str]) -> Iterator[Import]:
    """Every import site of ``module``: statements at any depth, and calls of
    ``importlib.import_module`` / ``__import__`` (literal names resolved, relative ones against
    the package ``__name__`` names)."""
    package = _package_of(module, sources)

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = package[: len(package) - node.level + 1] if node.level else []
        head = ".".join([*base, node.module] if node.module else base)
        # `from x import name` names a module or an attribute: keep what exists; a name the
        # package binds from one of its modules is that attribute (a function named as its
        # module: `from ..tools import replaying`)
        public = exported(head, sources)
        return [
            f"{head}.{a.name}" if f"{head}.{a.name}" in sources and a.name not in public else head
            for a in node.names
        ]

    def by_name(call: ast.Call) -> str | None:
        """The literal module a call imports, "" for a computed one, None if not an import."""
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in _IMPORTERS or not call.args:
            return None
        first = call.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            return ""
        text = first.value
        if not text.startswith("."):
            return text
        level = len(text) - len(text.lstrip("."))
        base = package[: len(package) - level + 1]
        return ".".join([*base, text[level:]] if text[level:] else base)

    def visit(node: ast.AST, when: str) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            inner = when
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner = "call"
            if isinstance(child, ast.Import | ast.ImportFrom):
                for target in targets(child):
                    yield Import(module, target, when, "statement", child.lineno)
            elif isinstance(child, ast.Call) and (found := by_name(child)) is not None:
                how = "by_name" if found else "computed"
                yield Import(module, found or "?", when, how, child.lineno)
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    yield from visit_one(stmt, "typing" if when == "load" else when)
                for stmt in child.orelse:
                    yield from visit_one(stmt, when)
                continue
            yield from visit(child, inner)

    def visit_one(stmt: ast.stmt, when: str) -> Iterator[Import]:
        holder = ast.Module(body=[stmt], type_ignores=[])
        yield from visit(holder, when)

    yield from visit(ast.parse(source), "load")


def all_imports(sources: Mapping[str, str]) -> list[Import]:
    return [i for name, src in sources.items() for i in imports(name, src, sources)]


def layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"{module}: its top-level name {top!r} is in no layer of LAYERS")


def _own(target: str) -> bool:
    return target == "agentnb" or target.startswith("agentnb.")


def upward(found: list[Import]) -> list[Import]:
    return [i for i in found if _own(i.target) and layer(i.target) > layer(i.source)]


# -- the checks (each returns its violations, in words) -------------------------------------
def layering_violations(
    found: list[Import],
    type_only_up: Mapping[tuple[str, str], str],
    lazy_up: Mapping[tuple[str, str], str],
) -> list[str]:
    out = []
    for i in upward(found):
        key = (i.source, i.target)
        if i.when == "load":
            out.append(f"{i}: against the layer order")
        elif i.when == "typing" and key not in type_only_up:
            out.append(f"{i}: against the layer order (give a reason in TYPE_ONLY_UP)")
        elif i.when == "call" and key not in lazy_up:
            out.append(f"{i}: against the layer order (give a reason in LAZY_UP)")
    return out


def computed_violations(found: list[Import], allowed: Mapping[str, str]) -> list[str]:
    return [
        f"{i}: the test cannot see what it loads (give a reason in COMPUTED_IMPORTS)"
        for i in found
        if i.how == "computed" and i.source not in allowed
    ]


def jupyter_violations(found: list[Import], allowed: Mapping[str, str]) -> list[str]:
    below = layer("agentnb.widgets")
    out = []
    for i in found:
        if layer(i.source) >= below:
            continue
        reaches = i.target.split(".")[0] in JUPYTER or i.target.startswith("agentnb.widgets")
        if reaches and (i.source not in allowed or i.how != "by_name"):
            out.append(f"{i}: below widgets, Jupyter is reached only through agentnb.display")
    return out


def stale_entries(
    found: list[Import],
    long_modules: Mapping[str, int],
    lists: Mapping[str, Mapping[object, str]],
) -> list[str]:
    """Allow-list entries that allow nothing any more (each list named)."""
    up = upward(found)
    needed: dict[str, set[object]] = {
        "TYPE_ONLY_UP": {(i.source, i.target) for i in up if i.when == "typing"},
        "LAZY_UP": {(i.source, i.target) for i in up if i.when == "call"},
        "COMPUTED_IMPORTS": {i.source for i in found if i.how == "computed"},
        "JUPYTER_LOOKUP": {
            i.source
            for i in found
            if i.how == "by_name"
            and (i.target.split(".")[0] in JUPYTER or i.target.startswith("agentnb.widgets"))
        },
        "LONG_MODULES": {name for name, n in long_modules.items() if n > 300},
    }
    return [
        f"{name} lists {entry!r}, which it no longer needs"
        for name, entries in lists.items()
        for entry in entries
        if entry not in needed[name]
    ]


def module_cycles(
    found: list[Import],
    sources: Mapping[str, str],
    when: tuple[str, ...] = ("load",),
    doors: Mapping[tuple[str, str], str] | None = None,
) -> list[list[str]]:
    """The import cycles of more than one module (each sorted), over the imports that run
    ``when`` ("load": at module level; "call": inside a function), less the ``doors``."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for i in found:
        if i.when in when and _own(i.target) and (i.source, i.target) not in (doors or {}):
            target = i.target if i.target in sources else i.target.rsplit(".", 1)[0]
            if target != i.source and target in sources:
                graph[i.source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            connect(node)
    return cycles


def error_classes(sources: Mapping[str, str]) -> dict[str, list[str]]:
    """Every class of the package deriving from AgentnbError (by name), with its direct bases
    that do: found in the source, so a subclass defined anywhere is seen."""
    bases: dict[str, list[str]] = {}
    for source in sources.values():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
    family = {"AgentnbError"}
    grew = True
    while grew:
        before = len(family)
        family |= {name for name, of in bases.items() if family & set(of)}
        grew = len(family) > before
    return {name: [b for b in bases[name] if b in family] for name in family - {"AgentnbError"}}


def drawn_tree(doc: str, names: set[str]) -> dict[str, str]:
    """Class -> parent as drawn in a docstring's tree (lines like ``│   ├── Name   words``)."""
    drawn: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        match = re.match(r"^([ │├└─]*?)(\w+)(\s{2,}.*)?$", line)
        if not match or match.group(2) not in names | {"AgentnbError"}:
            continue
        depth = len(match.group(1))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            drawn[match.group(2)] = stack[-1][1]
        stack.append((depth, match.group(2)))
    return drawn


def tree_violations(doc: str, classes: Mapping[str, list[str]]) -> list[str]:
    drawn = drawn_tree(doc, set(classes))
    out = [
        f"{name} is not drawn in the tree of errors.py"
        for name in sorted(set(classes) - set(drawn))
    ]
    out += [
        f"{name}: drawn under {parent}, defined under {classes[name]}"
        for name, parent in sorted(drawn.items())
        if classes[name] != [parent]
    ]
    return out


#: The periphery held to the core's public surface (invariant 12): it imports the core only
#: from ``agentnb`` and the ``__init__`` of each core package, never a private module, and the
#: other periphery packages only along the declared edges.
PERIPHERY = ("evals", "service", "observe")
CORE_PACKAGES = ("models", "tools", "runtime", "session", "storage", "context")
#: The declared edges between periphery packages, (from, to): nothing points back.
PERIPHERY_EDGES = {("evals", "service"), ("evals", "observe")}

#: What each kind of reach is told (the surface check's one message per kind).
CORE_MODULE = (
    "a core package's module, not its public surface (import it from agentnb.{package}; what "
    "is missing becomes public there, or moves down)"
)
PRIVATE_MODULE = "a private module (what is needed becomes public, or moves down)"
UNDECLARED_EDGE = (
    "an undeclared edge between periphery packages (declared: "
    + ", ".join(f"{a} -> {b}" for a, b in sorted(PERIPHERY_EDGES))
    + "; nothing points back)"
)


def surface_violations(
    found: list[Import],
    periphery: tuple[str, ...] = PERIPHERY,
    edges: set[tuple[str, str]] = PERIPHERY_EDGES,
) -> list[str]:
    """Every import site of a periphery package that reaches past the core's public surface:
    into a core package's module, into a private module, or along an undeclared edge."""
    out = []
    for i in found:
        source, target = i.source.split("."), i.target.split(".")
        if len(source) < 2 or source[1] not in periphery or not _own(i.target):
            continue
        if len(target) > 2 and target[1] in CORE_PACKAGES:
            out.append(f"{i}: {CORE_MODULE.format(package=target[1])}")
        elif any(part.startswith("_") and part != "__init__" for part in target[1:]):
            out.append(f"{i}: {PRIVATE_MODULE}")
        elif (
            len(target) > 1
            and target[1] in periphery
            and target[1] != source[1]
            and (source[1], target[1]) not in edges
        ):
            out.append(f"{i}: {UNDECLARED_EDGE}")
    return out


# -- the package, as it is --------------------------------------------------------------------
SOURCES = package_sources()
FOUND = all_imports(SOURCES)


def _lines() -> dict[str, int]:
    return {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }


def test_every_module_is_at_most_300_lines_or_says_why():
    long = {name: n for name, n in _lines().items() if n > 300}
    unexplained = {name: n for name, n in long.items() if name not in LONG_MODULES}
    assert not unexplained, f"over 300 lines with no reason in LONG_MODULES: {unexplained}"


def test_imports_point_down_the_layers_wherever_they_run():
    found = layering_violations(FOUND, TYPE_ONLY_UP, LAZY_UP)
    assert not found, "imports against the layer order:\n" + "\n".join(found)


def test_imports_by_a_computed_name_say_why():
    found = computed_violations(FOUND, COMPUTED_IMPORTS)
    assert not found, "\n".join(found)


def test_below_widgets_only_the_display_lookup_reaches_jupyter():
    found = jupyter_violations(FOUND, JUPYTER_LOOKUP)
    assert not found, "\n".join(found)


def test_every_allow_list_entry_is_still_needed():
    lists = {
        "TYPE_ONLY_UP": TYPE_ONLY_UP,
        "LAZY_UP": LAZY_UP,
        "COMPUTED_IMPORTS": COMPUTED_IMPORTS,
        "JUPYTER_LOOKUP": JUPYTER_LOOKUP,
        "LONG_MODULES": LONG_MODULES,
    }
    stale = stale_entries(FOUND, _lines(), lists)  # type: ignore[arg-type]
    assert not stale, "stale allow-list entries:\n" + "\n".join(stale)


def test_evals_service_and_observe_meet_the_core_through_its_public_surface():
    found = surface_violations(FOUND)
    assert not found, "\n".join(found)


def test_no_module_level_import_cycle():
    cycles = module_cycles(FOUND, SOURCES)
    assert not cycles, f"module-level import cycles: {cycles}"


def runtime_cycle_violations(
    found: list[Import],
    sources: Mapping[str, str],
    doors: Mapping[tuple[str, str], str],
    allowed: Mapping[frozenset[str], str],
) -> list[str]:
    """Cycles through imports that run (at module level or inside a function; not
    ``TYPE_CHECKING``) of more than one module, less the documented doors and the cycles
    allowed for now; and allow-list entries (doors, cycles) that no longer apply."""
    cycles = module_cycles(found, sources, ("load", "call"), doors)
    out = [
        f"a runtime import cycle: {' <-> '.join(c)} (move what both need to its home, or "
        "pass what one needs; a door or a reason goes in DOORS or RUNTIME_CYCLES)"
        for c in cycles
        if frozenset(c) not in allowed
    ]
    seen = {frozenset(c) for c in cycles}
    out += [f"RUNTIME_CYCLES lists {sorted(c)}, which is no longer a cycle" for c in allowed
            if c not in seen]  # fmt: skip
    edges = {(i.source, i.target) for i in found if i.when in ("load", "call")}
    out += [f"DOORS lists {d}, an import no longer made" for d in doors if d not in edges]
    return out


def test_no_runtime_import_cycle_but_the_documented_door():
    found = runtime_cycle_violations(FOUND, SOURCES, DOORS, RUNTIME_CYCLES)
    assert not found, "\n".join(found)


def test_the_top_level_holds_only_the_shared_vocabulary():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 15, top  # DESIGN.md's layout names each of them


def test_import_agentnb_loads_no_jupyter_and_no_pandas():
    code = (
        "import sys, agentnb\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'IPython', 'ipywidgets', 'anywidget', 'ipykernel', 'pandas'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_every_agentnb_error_is_drawn_in_the_tree_of_errors_py():
    classes = error_classes(SOURCES)
    assert set(errors.__all__) - {"AgentnbError"} <= set(classes)  # the tree is read whole
    found = tree_violations(inspect.getdoc(errors) or "", classes)
    assert not found, "\n".join(found)


def test_only_the_bus_numbers_events():
    """Invariant 7: the event ``seq`` has one writer, ``EventBus.emit``."""
    writers = []
    for path in PACKAGE.rglob("*.py"):
        rel = str(path.relative_to(PACKAGE))
        if rel in ("session/bus.py",) or rel.startswith("widgets/"):  # views count their own
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bseq\s*(\+=|=[^=])", line) and "self.seq" not in line:
                writers.append(f"{rel}:{n}: {line.strip()}")
            if re.search(r"bus\.seq\s*(\+=|=[^=])", line):
                writers.append(f"{rel}:{n}: {line.strip()}")
    assert not writers, writers


# -- each check catches its kind of violation -------------------------------------------------
def _made_up(files: dict[str, str]) -> tuple[dict[str, str], list[Import]]:
    """A made-up package: module name -> source (the real package's layers apply)."""
    sources = {"agentnb": "", "agentnb.session": "", "agentnb.runtime": "", **files}
    return sources, all_imports(sources)


def test_the_layer_check_catches_each_kind_of_upward_import():
    _, found = _made_up(
        {
            "agentnb.session.a": "from ..runtime import b\n",
            "agentnb.session.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from ..runtime.b import B\n",
            "agentnb.session.d": "def f():\n    from ..runtime import b\n",
            "agentnb.session.e": "import importlib\ndef f():\n"
            "    return importlib.import_module('agentnb.runtime.b')\n",
            "agentnb.session.f": "class F:\n    def g(self):\n        from .. import runtime\n",
            "agentnb.runtime.b": "from ..session import a\n",  # downward: fine
        }
    )
    found_words = layering_violations(found, {}, {})
    assert [w.split(":")[0] for w in found_words] == [
        "agentnb.session.a",
        "agentnb.session.c",
        "agentnb.session.d",
        "agentnb.session.e",
        "agentnb.session.f",
    ], found_words
    allowed = {("agentnb.session.c", "agentnb.runtime.b"): "why"}
    lazy = {
        ("agentnb.session.d", "agentnb.runtime.b"): "why",
        ("agentnb.session.e", "agentnb.runtime.b"): "why",
        ("agentnb.session.f", "agentnb.runtime"): "why",
    }
    assert len(layering_violations(found, allowed, lazy)) == 1  # a module-level one: never


def test_the_computed_import_check_catches_a_name_it_cannot_read():
    _, found = _made_up(
        {
            "agentnb.session.a": "import importlib\nname = 'x'\n"
            "importlib.import_module(f'agentnb.{name}')\n"
        }
    )
    assert len(computed_violations(found, {})) == 1
    assert computed_violations(found, {"agentnb.session.a": "why"}) == []


def test_the_jupyter_check_catches_every_way_to_reach_it():
    _, found = _made_up(
        {
            "agentnb.session.a": "import IPython\n",
            "agentnb.session.b": "def f():\n    from ipywidgets import HTML\n",
            "agentnb.session.c": "import importlib\ndef f():\n"
            "    return importlib.import_module('agentnb.widgets')\n",
            "agentnb.session.d": "def f():\n    return __import__('IPython.display')\n",
            "agentnb.display": "import importlib\ndef f():\n"
            "    return importlib.import_module('IPython.display')\n",
            "agentnb.widgets.x": "import ipywidgets\n",  # the views: fine
        }
    )
    found_words = jupyter_violations(found, {"agentnb.display": "the one lookup"})
    assert sorted(w.split(":")[0] for w in found_words) == [
        "agentnb.session.a",
        "agentnb.session.b",
        "agentnb.session.c",
        "agentnb.session.d",
    ], found_words


def test_the_stale_check_catches_an_entry_of_every_list():
    _, found = _made_up({"agentnb.session.a": "from ..runtime import b\n"})
    lists = {
        "TYPE_ONLY_UP": {("agentnb.x", "agentnb.y"): "why"},
        "LAZY_UP": {("agentnb.x", "agentnb.y"): "why"},
        "COMPUTED_IMPORTS": {"agentnb.x": "why"},
        "JUPYTER_LOOKUP": {"agentnb.x": "why"},
        "LONG_MODULES": {"short.py": "why"},
    }
    stale = stale_entries(found, {"short.py": 12}, lists)  # type: ignore[arg-type]
    assert sorted(s.split()[0] for s in stale) == sorted(lists), stale


def test_the_cycle_check_catches_a_cycle():
    sources, found = _made_up(
        {
            "agentnb.session.a": "from . import b\n",
            "agentnb.session.b": "from .a import x\n",
        }
    )
    assert module_cycles(found, sources) == [["agentnb.session.a", "agentnb.session.b"]]


def test_the_runtime_cycle_check_catches_a_cycle_through_a_function():
    sources, found = _made_up(
        {
            "agentnb.session.a": "from . import b\n",
            "agentnb.session.b": "def f():\n    from .a import x\n",  # at run time: a cycle
            "agentnb.session.c": "from . import d\n",
            "agentnb.session.d": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from .c import C\n",  # for the type checker only: no cycle
            "agentnb.session.e": "def f():\n    import importlib\n"
            "    return importlib.import_module('agentnb.session.f')\n",
            "agentnb.session.f": "from . import e\n",  # through a door: allowed
        }
    )
    door = {("agentnb.session.e", "agentnb.session.f"): "the door"}
    assert runtime_cycle_violations(found, sources, door, {}) == [
        "a runtime import cycle: agentnb.session.a <-> agentnb.session.b (move what both need "
        "to its home, or pass what one needs; a door or a reason goes in DOORS or RUNTIME_CYCLES)"
    ]
    allowed = {frozenset({"agentnb.session.a", "agentnb.session.b"}): "why"}
    assert runtime_cycle_violations(found, sources, door, allowed) == []
    assert len(runtime_cycle_violations(found, sources, {}, allowed)) == 1  # e <-> f
    stale = {frozenset({"agentnb.session.c", "agentnb.session.d"}): "why"}
    words = runtime_cycle_violations(found, sources, {("x", "y"): "why"}, {**allowed, **stale})
    assert words[-2:] == [
        "RUNTIME_CYCLES lists ['agentnb.session.c', 'agentnb.session.d'], which is no longer a "
        "cycle",
        "DOORS lists ('x', 'y'), an import no longer made",
    ]


def test_the_tree_check_catches_an_undrawn_error_and_a_wrong_parent():
    sources = {
        "agentnb.errors": "class AgentnbError(Exception): ...\n"
        "class StoreError(AgentnbError): ...\nclass ModelError(AgentnbError): ...\n",
        "agentnb.service.tasks": "from ..errors import AgentnbError\n"
        "class QueueFull(AgentnbError): ...\n",
    }
    doc = "AgentnbError\n├── StoreError   a\n└── ModelError   b\n    └── QueueFull   c\n"
    classes = error_classes(sources)
    assert tree_violations(doc, classes) == [
        "QueueFull: drawn under ModelError, defined under ['AgentnbError']"
    ]
    assert tree_violations(doc.replace("    └── QueueFull   c\n", ""), classes) == [
        "QueueFull is not drawn in the tree of errors.py"
    ]


def test_the_surface_check_catches_each_kind_of_reach():
    _, found = _made_up(
        {
            "agentnb.service": "",
            "agentnb.observe": "",
            "agentnb.evals": "",
            "agentnb.tools": "from .replaying import replaying\n__all__ = ['replaying']\n",
            "agentnb.tools.replaying": "def replaying(): ...\n",
            "agentnb.session.session": "class Session: ...\n",
            "agentnb._secrets": "",
            # a core package's module: at load, for the type checker, in a function, by name
            "agentnb.evals.a": "from ..session.session import Session\n",
            "agentnb.service.a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from ..session.session import Session\n",
            "agentnb.observe.a": "def f():\n    from ..session import session\n",
            "agentnb.evals.b": "import importlib\nimportlib.import_module('agentnb.tools.replaying')\n",
            # a private module
            "agentnb.evals.c": "from .. import _secrets\n",
            "agentnb.service.b": "def f():\n    from .._secrets import Secrets\n",
            # an undeclared edge: each way back, and between service and observe
            "agentnb.service.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from ..evals import Task\n",
            "agentnb.observe.b": "from ..evals import a\n",
            "agentnb.observe.c": "import importlib\nimportlib.import_module('agentnb.service.a')\n",
            "agentnb.service.d": "def f():\n    from ..observe import b\n",
            # fine: the public surface, a public function named as its module, declared edges
            "agentnb.service.fine": "from ..session import Session\nfrom .. import errors\n",
            "agentnb.evals.fine": "from ..service import a\nfrom ..observe import b\n"
            "from ..tools import replaying\n",
        }
    )
    words = surface_violations(found)
    kinds = {CORE_MODULE.format(package="session"): "core", CORE_MODULE.format(package="tools"):
             "core", PRIVATE_MODULE: "private", UNDECLARED_EDGE: "edge"}  # fmt: skip
    assert sorted((w.split(":")[0], kinds[w.split(": ", 1)[1]]) for w in words) == [
        ("agentnb.evals.a", "core"),
        ("agentnb.evals.b", "core"),
        ("agentnb.evals.c", "private"),
        ("agentnb.observe.a", "core"),
        ("agentnb.observe.b", "edge"),
        ("agentnb.observe.c", "edge"),
        ("agentnb.service.a", "core"),
        ("agentnb.service.b", "private"),
        ("agentnb.service.c", "edge"),
        ("agentnb.service.d", "edge"),
    ], words
    assert "import it from agentnb.session;" in words[0]
    assert "declared: evals -> observe, evals -> service; nothing points back" in UNDECLARED_EDGE
    assert PERIPHERY == ("evals", "service", "observe")  # exactly the three
