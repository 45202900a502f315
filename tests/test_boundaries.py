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


#: Modules allowed over 300 lines, each with its reason (DESIGN.md: a size limit with a
#: written reason per exception beats splitting by line count).
LONG_MODULES = {
    "agent.py": "the Agent's settings (each checked when set), the prompt they build, the run "
    "entry points, and copy()/replaying(): the variants an evaluation compares, read as one",
    "events.py": "every event type of the lifecycle and their shared base, read as one list",
    "messages.py": "the Chat Completions message classes and their lossless wire round trip",
    "models/openai/client.py": "one call path for whole and streamed replies, with the one "
    "deadline and the size bounds every phase shares, read as one",
    "models/openai/text_actions.py": "the written forms of an action and the rules for taking "
    "one (its docstring is the spec), read beside the parser that follows them",
    "session/session.py": "the Session and its guarded edits (append, edit, replace, delete, "
    "truncate, repair): every way to change a conversation, read beside the state it guards",
    "models/replay.py": "the cassette format, written by the recorder and read by the replayer, "
    "in one place so the two cannot drift",
    "service/inprocess.py": "the in-process backend: its queue and workers, each step of a "
    "task's life (begin, start, attempted, end; run_step shares them) and the verbs the "
    "Runtime asks of a backend, read as one",
    "service/runtime.py": "the service's one public class: each verb of its API (submit, "
    "status, wait, result, get_trace, list, session, cancel, run_step, recover, approve, "
    "deny, close) and the one finish() every backend ends a task with, read as one",
    "widgets/session_view.py": "the live view of one session: its state for late views, each "
    "change as one message, the status line, and what its controls and Approve / Deny send, "
    "read as one",
    "tools/tool.py": "a tool's function, schema and options (timeout, threads, side effects, "
    "approval, idempotency) with the decorator that sets them, read as one",
    "runtime/execute_tools.py": "every outcome a call can have (bad JSON, unknown tool, invalid "
    "arguments, errors, timeouts, a guarded call's key and admission) beside the one call path "
    "that produces it, read as one",
}


def test_every_module_is_at_most_300_lines_or_says_why():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300
    }
    unexplained = {name: n for name, n in long.items() if name not in LONG_MODULES}
    assert not unexplained, f"over 300 lines with no reason in LONG_MODULES: {unexplained}"
    stale = set(LONG_MODULES) - set(long)
    assert not stale, f"LONG_MODULES lists modules that are short now: {stale}"


# The layers, lowest first (DESIGN.md "Layout"): a module-level import may only point to its
# own layer or a lower one. Higher layers are reached inside functions, lazily.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "tokens", "_sdk", "_html", "_settings", "_json", "_secrets"),
    ("messages",),
    ("tools",),
    ("models",),
    ("events",),
    ("session",),
    ("context",),
    ("runtime",),
    ("agent",),
    ("storage", "display"),
    ("testing", "evals", "service", "observe"),
    ("widgets", "travel"),
    ("__init__", "__main__"),
]

#: `if TYPE_CHECKING:` imports that point up the order, each with a one-line reason.
TYPE_ONLY_UP: dict[tuple[str, str], str] = {
    ("agentnb.runtime.state", "agentnb.agent"): "a run's state reads its agent's settings",
    ("agentnb.runtime.run", "agentnb.agent"): "a run is started by an agent and reads it",
    ("agentnb.runtime.subagent", "agentnb.agent"): "agent.as_tool() runs the agent it is given",
    ("agentnb.runtime.result", "agentnb.storage.trace"): "RunResult.trace() returns a Trace",
    ("agentnb.session.session", "agentnb.context.memory"): "a session carries its user's memory",
    ("agentnb.session.session", "agentnb.runtime.result"): "a session keeps its runs' records",
    ("agentnb.session.session", "agentnb.runtime.run"): "session.active_run is the running Run",
    ("agentnb.session.edits", "agentnb.runtime.run"): "edits ask the active run what it holds",
}


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for rank, names in enumerate(LAYERS):
        if top in names:
            return rank
    raise AssertionError(f"{module}: its top-level name {top!r} is in no layer of LAYERS")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path) -> tuple[set[str], set[str]]:
    """(imports run when the module loads, imports under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = [*parts, "__init__"]  # a package's relative imports start at the package
    runtime: set[str] = set()
    typing_only: set[str] = set()

    def names(node: ast.Import | ast.ImportFrom) -> set[str]:
        if isinstance(node, ast.Import):
            return {a.name for a in node.names}
        if not node.level:
            return {node.module} if node.module else set()
        base = parts[: len(parts) - node.level]
        if node.module:
            return {".".join([*base, node.module])}
        return {".".join([*base, a.name]) for a in node.names}

    def visit(body: list[ast.stmt], sink: set[str]) -> None:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                sink |= names(node)
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                visit(node.body, typing_only if "TYPE_CHECKING" in test else sink)
                visit(node.orelse, sink)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block, sink)
                for handler in node.handlers:
                    visit(handler.body, sink)

    visit(tree.body, runtime)
    own = {m for m in runtime if m.startswith("agentnb")}
    return own, {m for m in typing_only if m.startswith("agentnb")}


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found, _ = _top_level_imports(path)
        # `from . import name` may name a module or an attribute: keep what exists
        graph[name] = {m if m in modules else m.rsplit(".", 1)[0] for m in found} - {name}
    return graph


def test_module_level_imports_point_down_the_layers():
    upward = []
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        runtime, typing_only = _top_level_imports(path)
        for target in sorted(runtime):
            if _layer(target) > _layer(name):
                upward.append(f"{name} imports {target}")
        for target in sorted(typing_only):
            if _layer(target) > _layer(name) and (name, target) not in TYPE_ONLY_UP:
                upward.append(f"{name} imports {target} (TYPE_CHECKING; give a reason)")
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_no_module_level_import_cycle():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in graph:
                continue
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
    assert not cycles, f"module-level import cycles: {cycles}"


def test_the_top_level_holds_only_the_shared_vocabulary():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 14, top


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
